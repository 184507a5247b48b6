/*
 * Text from outside (replies, logs, probe output, arguments) made fit to
 * show: one cleaner, and every caller names the rule it wants as flags.
 *
 * A byte is read as one of: ESC (an escape sequence starts), TAB, CR or
 * LF, another C0 control or DEL, printable ASCII, or part of a UTF-8
 * sequence. Without a flag for its kind a byte is kept as it is, except
 * controls (TAB, CR, LF and ESC included), which are dropped. The flags:
 *
 *   HP_TEXT_CTRL_QMARK   a control that no other flag takes becomes '?'
 *                        (instead of being dropped)
 *   HP_TEXT_KEEP_TAB     TAB is kept
 *   HP_TEXT_TAB_SPACE    TAB becomes a space
 *   HP_TEXT_NL_SPACE     CR and LF become a space each
 *   HP_TEXT_STRIP_ESC    an escape sequence is dropped whole, read as a
 *                        terminal reads it (ECMA-48): CSI to its final
 *                        byte, OSC, DCS, SOS, PM and APC to BEL or ST
 *                        (ESC \ or U+009C), others with their
 *                        intermediates and final byte
 *   HP_TEXT_STRIP_ESC_LOOSE  an escape sequence is dropped as log readers
 *                        do: CSI up to the first byte from 0x40 to 0x7e
 *                        whatever comes between, a string up to BEL or
 *                        ESC and one byte after that, any other ESC with
 *                        the one byte after it
 *   HP_TEXT_ESC_INTERMEDIATES  with _LOOSE, that other ESC also takes
 *                        its intermediates (0x20..0x2f) along
 *   HP_TEXT_REPLACE_INVALID  ill-formed UTF-8 (Unicode table 3-7:
 *                        overlong forms, surrogates, past U+10FFFF, a cut
 *                        sequence) becomes '?', one for each maximal
 *                        ill-formed subpart
 *   HP_TEXT_REPLACE_BYTES  the same, one '?' for each byte
 *   HP_TEXT_DROP_C1      with _REPLACE_INVALID, a C1 control (U+0080..
 *                        U+009F, CSI among them) is dropped
 *   HP_TEXT_C1_QMARK     a C1 control becomes "??" (one per byte)
 *   HP_TEXT_ELLIPSIS     text cut at max bytes ends in "…" (U+2026),
 *                        within the max
 *   HP_TEXT_REDACT_URLS  (hp_text_str only) a URL's userinfo becomes
 *                        three stars first, as hp_redact_urls
 *
 * Output is cut at max bytes after a whole character: a replacement, a
 * whole UTF-8 sequence when a _REPLACE_ flag reads UTF-8, else a byte.
 * Without _ELLIPSIS a rule never makes text longer, so it may clean in
 * place (hp_text_copy, hp_text_str).
 */
#ifndef HP_TEXT_H
#define HP_TEXT_H

#include <stddef.h>

#include "hp/buf.h"

#define HP_TEXT_CTRL_QMARK         (1u << 0)
#define HP_TEXT_KEEP_TAB           (1u << 1)
#define HP_TEXT_TAB_SPACE          (1u << 2)
#define HP_TEXT_NL_SPACE           (1u << 3)
#define HP_TEXT_STRIP_ESC          (1u << 4)
#define HP_TEXT_STRIP_ESC_LOOSE    (1u << 5)
#define HP_TEXT_ESC_INTERMEDIATES  (1u << 6)
#define HP_TEXT_REPLACE_INVALID    (1u << 7)
#define HP_TEXT_REPLACE_BYTES      (1u << 8)
#define HP_TEXT_DROP_C1            (1u << 9)
#define HP_TEXT_C1_QMARK           (1u << 10)
#define HP_TEXT_ELLIPSIS           (1u << 11)
#define HP_TEXT_REDACT_URLS        (1u << 12)

/*
 * The rules hpnode uses, by what the text is for.
 *
 * HP_TEXT_REPORT: a value from the cluster in a report, on a terminal or
 * in JSON: escape sequences and controls gone, blanks one space each,
 * valid UTF-8, cut with an ellipsis. Printable Unicode (bidirectional
 * marks and the like) is kept as it is.
 */
#define HP_TEXT_REPORT (HP_TEXT_STRIP_ESC | HP_TEXT_TAB_SPACE | HP_TEXT_NL_SPACE | \
			HP_TEXT_REPLACE_INVALID | HP_TEXT_DROP_C1 | HP_TEXT_ELLIPSIS)
/*
 * HP_TEXT_MESSAGE: one line of a message (errors, arguments echoed back):
 * blanks become spaces and every other control, ESC and C1 included, a
 * '?', byte for byte, so the text keeps its length and shows where
 * something was.
 */
#define HP_TEXT_MESSAGE (HP_TEXT_CTRL_QMARK | HP_TEXT_TAB_SPACE | HP_TEXT_NL_SPACE | \
			 HP_TEXT_C1_QMARK)
/* HP_TEXT_SAFE: the same, with every URL's userinfo as three stars (hp_text_str). */
#define HP_TEXT_SAFE (HP_TEXT_MESSAGE | HP_TEXT_REDACT_URLS)
/* HP_TEXT_LOG: a log line kept as text (NCCL logs, the NCCL probes' lines). */
#define HP_TEXT_LOG (HP_TEXT_STRIP_ESC_LOOSE | HP_TEXT_TAB_SPACE | HP_TEXT_REPLACE_BYTES | \
		     HP_TEXT_C1_QMARK)
/* HP_TEXT_PROBE: a line of the node probe: TABs kept (its fields), other bytes as they came. */
#define HP_TEXT_PROBE (HP_TEXT_STRIP_ESC_LOOSE | HP_TEXT_ESC_INTERMEDIATES | HP_TEXT_KEEP_TAB)

/* Appends s (a C string; NULL adds nothing) cleaned by rule to out, at most max bytes. */
void hp_text_add(unsigned rule, const char *s, struct hp_buf *out, size_t max);
/* The same for the n bytes at s, NUL read as a control; stops where out is full. */
void hp_text_addn(unsigned rule, const char *s, size_t n, size_t max, struct hp_buf *out);
/*
 * The n bytes at s cleaned into dst, NUL-terminated; returns the length.
 * dst has room for n + 1 bytes and may be s itself: the rule must not
 * lengthen text (no _ELLIPSIS; a _REPLACE_* '?' stands for at least one byte).
 */
size_t hp_text_copy(unsigned rule, const char *s, size_t n, char *dst);
/*
 * in copied to out (size n, cut at n - 1 bytes; with HP_TEXT_REDACT_URLS
 * every URL's userinfo as three stars), then cleaned there by rule,
 * which must not lengthen text. Returns out.
 */
const char *hp_text_str(unsigned rule, const char *in, char *out, size_t n);

/*
 * The first chars UTF-8 characters of s (NULL reads as "") into out, with
 * "…" appended when anything was cut; returns out, which must hold
 * HP_CLIP_SIZE(chars) bytes. A character is a lead byte and at most three
 * continuation bytes (more count anew), so a cut never splits one.
 */
#define HP_CLIP_SIZE(chars) ((chars) * 4 + 8)
const char *hp_text_clip(const char *s, size_t chars, char *out);

#endif
