/*
 * The text cleaner (src/util/text.c), one flag at a time: what each kind
 * of byte becomes without a flag, and what each flag changes. The named
 * rules are held to the cleaners they replaced by tests/fuzz/fuzz-text.c
 * and by the callers' own tests.
 */
#include <string.h>

#include "hp/buf.h"
#include "hp/text.h"
#include "t.h"

/* s (n bytes) cleaned by rule, at most max bytes, as a string. */
static const char *clean_n(unsigned rule, const char *s, size_t n, size_t max)
{
	static char out[512];
	struct hp_buf b = HP_BUF_INIT(4096);

	hp_text_addn(rule, s, n, max, &b);
	hp_strlcpy(out, b.len ? b.buf : "", sizeof(out));
	hp_buf_release(&b);
	return out;
}

static const char *clean(unsigned rule, const char *s)
{
	return clean_n(rule, s, strlen(s), 400);
}

static void t_no_flag(void)
{
	/* Controls (TAB, CR, LF and ESC too) go; every other byte stays as it came. */
	T_STREQ(clean(0, "a\tb\x01" "c\x1b[1md\r\n\x7f\xff\xc2\x85"), "abc[1md\xff\xc2\x85");
	/* NUL is a control of the n bytes, not their end. */
	T_STREQ(clean_n(0, "a\0b", 3, 400), "ab");
}

static void t_ctrl_qmark(void)
{
	T_STREQ(clean(HP_TEXT_CTRL_QMARK, "a\tb\x01" "c\x1b[1m\x7f\r\n"), "a?b?c?[1m???");
}

static void t_tab(void)
{
	T_STREQ(clean(HP_TEXT_KEEP_TAB, "a\tb\x01\r"), "a\tb");
	T_STREQ(clean(HP_TEXT_TAB_SPACE, "a\tb\r\n"), "a b");
	/* Kept wins over a space when a rule names both. */
	T_STREQ(clean(HP_TEXT_KEEP_TAB | HP_TEXT_TAB_SPACE, "a\tb"), "a\tb");
}

static void t_nl_space(void)
{
	T_STREQ(clean(HP_TEXT_NL_SPACE, "a\r\nb\tc"), "a  bc");
	T_STREQ(clean(HP_TEXT_NL_SPACE | HP_TEXT_CTRL_QMARK, "a\nb\tc"), "a b?c");
}

static void t_strip_esc_terminal(void)
{
	unsigned r = HP_TEXT_STRIP_ESC;

	T_STREQ(clean(r, "x\x1b[2Jy\x1b[38;5;196mz"), "xyz");
	T_STREQ(clean(r, "\x1b]0;title\x07z"), "z");
	T_STREQ(clean(r, "\x1b]8;;http://a\x1b\\link"), "link");
	T_STREQ(clean(r, "\x1b]0;t\xc2\x9cz"), "z");
	T_STREQ(clean(r, "\x1b(Bq\x1b" "7r\x1b#8s"), "qrs");
	/* A CSI ends at a byte that cannot be in it; that byte is read anew. */
	T_STREQ(clean(r, "\x1b[1\x01m"), "m");
	/* A string that is never ended runs to the end. */
	T_STREQ(clean(r, "a\x1b]0;t\x1bXY"), "a");
	T_STREQ(clean(r, "a\x1b"), "a");
}

static void t_strip_esc_loose(void)
{
	unsigned r = HP_TEXT_STRIP_ESC_LOOSE;

	T_STREQ(clean(r, "x\x1b[2Jy"), "xy");
	/* A CSI runs to its first final byte, whatever comes between. */
	T_STREQ(clean(r, "\x1b[1\x01mX"), "X");
	/* A string ends at any ESC, which takes one more byte along. */
	T_STREQ(clean(r, "\x1b]0;t\x1bXY"), "Y");
	T_STREQ(clean(r, "\x1b]0;t\x07Z"), "Z");
	/* Any other ESC takes the one byte after it. */
	T_STREQ(clean(r, "\x1b(BX"), "BX");
	T_STREQ(clean(r | HP_TEXT_ESC_INTERMEDIATES, "\x1b(BX\x1b #8Y"), "XY");
	T_STREQ(clean(r, "a\x1b"), "a");
}

static void t_replace_invalid(void)
{
	unsigned r = HP_TEXT_REPLACE_INVALID;

	/* One '?' for each maximal ill-formed subpart. */
	T_STREQ(clean(r, "a\xe2\x82" "Ab"), "a?Ab");
	T_STREQ(clean(r, "\xed\xa0\x80"), "???");       /* a surrogate */
	T_STREQ(clean(r, "\xc0\xaf"), "??");            /* overlong */
	T_STREQ(clean(r, "\xf4\x90\x80\x80"), "????");  /* past U+10FFFF */
	T_STREQ(clean(r, "x\xe2\x82"), "x?");           /* cut at the end */
	T_STREQ(clean(r, "\xf0\x9d\x84\x9e\xc3\xa9"), "\xf0\x9d\x84\x9e\xc3\xa9");
	/* A C1 control is valid UTF-8: kept unless a rule says otherwise. */
	T_STREQ(clean(r, "\xc2\x85"), "\xc2\x85");
	/* One '?' for each byte. */
	T_STREQ(clean(HP_TEXT_REPLACE_BYTES, "a\xe2\x82" "Ab"), "a??Ab");
	T_STREQ(clean(HP_TEXT_REPLACE_BYTES, "\xc3\xa9"), "\xc3\xa9");
}

static void t_c1(void)
{
	T_STREQ(clean(HP_TEXT_REPLACE_INVALID | HP_TEXT_DROP_C1, "a\xc2\x85" "b\xc2\x9b" "1m\xc2\xa0"),
		"ab1m\xc2\xa0");
	T_STREQ(clean(HP_TEXT_C1_QMARK, "a\xc2\x9b" "31m\xc2\xa0"), "a??31m\xc2\xa0");
}

static void t_max_and_ellipsis(void)
{
	struct hp_buf b = HP_BUF_INIT(4096);

	/* Cut after a whole character when UTF-8 is read, else after a byte. */
	T_STREQ(clean_n(0, "abcdef", 6, 4), "abcd");
	T_STREQ(clean_n(HP_TEXT_REPLACE_INVALID, "\xc3\xa9\xc3\xa9", 4, 3), "\xc3\xa9");
	T_STREQ(clean_n(0, "\xc3\xa9\xc3\xa9", 4, 3), "\xc3\xa9\xc3");
	/* An ellipsis within the max, only when something was cut. */
	T_STREQ(clean_n(HP_TEXT_ELLIPSIS, "abcdef", 6, 4), "a\xe2\x80\xa6");
	T_STREQ(clean_n(HP_TEXT_ELLIPSIS, "abcd", 4, 4), "abcd");
	T_STREQ(clean_n(HP_TEXT_ELLIPSIS, "abcd\x01\x02", 6, 4), "abcd");
	T_STREQ(clean_n(HP_TEXT_ELLIPSIS, "abcdef", 6, 2), "");
	/* The max counts from what the buffer held before. */
	hp_buf_puts(&b, "pre:");
	hp_text_add(HP_TEXT_ELLIPSIS, "abcdef", &b, 4);
	T_STREQ(b.buf, "pre:a\xe2\x80\xa6");
	hp_buf_release(&b);
	/* NULL adds nothing. */
	hp_text_add(HP_TEXT_REPORT, NULL, &b, 10);
	T_EQ(b.len, 0);
}

static void t_buffer_full(void)
{
	struct hp_buf b = HP_BUF_INIT(3);

	/* Stops where the buffer is full, without an ellipsis it has no room for. */
	hp_text_add(HP_TEXT_REPORT, "abcdef", &b, 100);
	T_STREQ(b.buf, "abc");
	hp_buf_release(&b);
}

static void t_copy_in_place(void)
{
	char s[64];
	size_t n;

	strcpy(s, "a\x1b[1mb\tc\xe2\x82!");
	n = hp_text_copy(HP_TEXT_PROBE, s, strlen(s), s);
	T_STREQ(s, "ab\tc\xe2\x82!");
	T_EQ(n, strlen(s));
	strcpy(s, "x\x1b[2J\xc2\x9b\tz");
	hp_text_copy(HP_TEXT_MESSAGE, s, strlen(s), s);
	T_STREQ(s, "x?[2J?? z");
}

static void t_str(void)
{
	char out[32];

	T_STREQ(hp_text_str(HP_TEXT_MESSAGE | HP_TEXT_REDACT_URLS, "see http://u:pw@h/\t.", out,
			    sizeof(out)), "see http://***@h/ .");
	T_STREQ(hp_text_str(HP_TEXT_MESSAGE, "http://u:pw@h\n", out, sizeof(out)), "http://u:pw@h ");
	T_STREQ(hp_text_str(HP_TEXT_MESSAGE, "abcdef", out, 4), "abc");
}

static void t_clip(void)
{
	char out[HP_CLIP_SIZE(4)];

	T_STREQ(hp_text_clip("abcde", 4, out), "abcd\xe2\x80\xa6");
	T_STREQ(hp_text_clip("\xc3\xa9\xe2\x82\xac", 1, out), "\xc3\xa9\xe2\x80\xa6");
	T_STREQ(hp_text_clip(NULL, 4, out), "");
}

T_MAIN(T(t_no_flag), T(t_ctrl_qmark), T(t_tab), T(t_nl_space), T(t_strip_esc_terminal),
       T(t_strip_esc_loose), T(t_replace_invalid), T(t_c1), T(t_max_and_ellipsis),
       T(t_buffer_full), T(t_copy_in_place), T(t_str), T(t_clip))
