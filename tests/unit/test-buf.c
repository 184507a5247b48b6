/*
 * hp_buf contract: NUL-termination, caps, detach, and the error list.
 */
#include <stdlib.h>

#include "hp/buf.h"
#include "hp/err.h"
#include "t.h"

static void t_empty_is_terminated(void)
{
	struct hp_buf b = HP_BUF_INIT(16);

	T_ASSERT(b.buf != NULL);
	T_STREQ(b.buf, "");
	T_EQ(b.len, 0);
	hp_buf_release(&b);
}

static void t_cap_refuses_growth(void)
{
	struct hp_buf b = HP_BUF_INIT(8);

	T_EQ(hp_buf_adds(&b, "12345678"), 0);
	T_EQ(hp_buf_adds(&b, "9"), -1);
	T_STREQ(b.buf, "12345678");
	T_EQ(hp_buf_addf(&b, "%d", 1), -1);
	T_EQ(b.len, 8);
	hp_buf_release(&b);
}

static void t_addf_and_detach(void)
{
	struct hp_buf b = HP_BUF_INIT(1024);
	char *s;
	size_t n;
	int i;

	for (i = 0; i < 100; i++)
		T_EQ(hp_buf_addf(&b, "%d,", i), 0);
	T_CONTAINS(b.buf, "98,99,");
	s = hp_buf_detach(&b, &n);
	T_EQ(n, 290);
	T_STREQ(b.buf, "");
	T_EQ(b.len, 0);
	free(s);
	s = hp_buf_detach(&b, NULL);
	T_STREQ(s, "");
	free(s);
}

static void t_error_first_wins(void)
{
	struct hp_error e = HP_ERROR_INIT;

	T_EQ(hp_error_set(&e, HP_ERR_NO_REGION, "no region %d", 1), -1);
	hp_error_set(&e, HP_ERR_HTTP, "later");
	T_EQ(e.code, HP_ERR_NO_REGION);
	T_STREQ(e.msg, "no region 1");
	T_EQ(hp_err_exit_status(HP_ERR_NO_REGION), HP_EXIT_USAGE);
	T_EQ(hp_err_exit_status(HP_ERR_CREDS), HP_EXIT_CREDS);
	T_EQ(hp_err_exit_status(HP_ERR_USAGE), HP_EXIT_USAGE);
	T_STREQ(hp_err_name(HP_ERR_PARSE), "HP_ERR_PARSE");
}

T_MAIN(T(t_empty_is_terminated), T(t_cap_refuses_growth), T(t_addf_and_detach), T(t_error_first_wins))
