/*
 * The cJSON out-of-memory policy (include/hp/json.h): the test support
 * installs the hooks as main() does, cJSON then allocates through them,
 * and an allocation that fails ends the process loudly instead of
 * returning NULL to an unchecked cJSON_Add* call.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "hp/json.h"
#include "t.h"

/* A sanitizer's runtime owns malloc and its shadow memory does not fit a 1 GiB address space. */
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define UNDER_SANITIZER 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define UNDER_SANITIZER 1
#endif
#endif

static void t_cjson_allocates_through_the_hooks(void)
{
	size_t before = hp_json_allocations();
	cJSON *o = cJSON_CreateObject();

	T_ASSERT(o);
	cJSON_AddStringToObject(o, "key", "value");
	T_ASSERT(hp_json_allocations() >= before + 3); /* object, member, key and string copies */
	cJSON_Delete(o);
	/* Installing them again changes nothing. */
	hp_json_init();
	before = hp_json_allocations();
	cJSON_Delete(cJSON_CreateArray());
	T_EQ(hp_json_allocations(), before + 1);
}

/* A child that cannot get 2 GiB from cJSON dies with the message; it never sees NULL. */
static void t_failed_allocation_dies_loudly(void)
{
#ifdef UNDER_SANITIZER
	/* ASan and TSan replace malloc and report the failure themselves. */
	return;
#else
	int fds[2], status;
	char msg[256] = "";
	size_t len = 0;
	ssize_t n;
	pid_t pid;

	T_ASSERT(!pipe(fds));
	fflush(NULL);
	pid = fork();
	T_ASSERT(pid >= 0);
	if (pid == 0) {
		struct rlimit rl = { (rlim_t)1 << 30, (rlim_t)1 << 30 };
		cJSON *o = cJSON_CreateObject();
		char *text;

		dup2(fds[1], 2);
		close(fds[0]);
		/* 1 GiB of address space at most: a 2 GiB print buffer cannot be had. */
		setrlimit(RLIMIT_AS, &rl);
		text = cJSON_PrintBuffered(o, INT_MAX, 0);
		fprintf(stderr, "returned %s\n", text ? "a buffer" : "NULL");
		_exit(0);
	}
	close(fds[1]);
	while (len < sizeof(msg) - 1 && (n = read(fds[0], msg + len, sizeof(msg) - 1 - len)) > 0)
		len += (size_t)n;
	close(fds[0]);
	msg[len] = '\0';
	T_ASSERT(waitpid(pid, &status, 0) == pid);
	T_ASSERT(WIFEXITED(status));
	T_EQ(WEXITSTATUS(status), 1);
	T_STREQ(msg, "hpnode: fatal: out of memory\n");
#endif
}

T_MAIN(T(t_cjson_allocates_through_the_hooks), T(t_failed_allocation_dies_loudly))
