/*
 * Small process-wide helpers: allocation that dies on failure, a
 * non-owning string view, and bounded string utilities.
 *
 * Every allocation in hpnode goes through x* wrappers, so call sites never
 * test for NULL; running out of memory ends the process with a message.
 */
#ifndef HP_UTIL_H
#define HP_UTIL_H

#include <stddef.h>
#include <stdint.h>

#define HP_VERSION "0.1.0"
/* The git revision the binary was built from ("4e56961", "+dirty" when modified), or NULL. */
const char *hp_revision(void);

#define HP_ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

#if defined(__GNUC__)
#define HP_PRINTF(f, a) __attribute__((format(printf, f, a)))
#define HP_NORETURN __attribute__((noreturn))
#define HP_WARN_UNUSED __attribute__((warn_unused_result))
#else
#define HP_PRINTF(f, a)
#define HP_NORETURN
#define HP_WARN_UNUSED
#endif

/* Print "hpnode: fatal: <msg>" to stderr and exit(1). */
HP_NORETURN void hp_die(const char *fmt, ...) HP_PRINTF(1, 2);

void *xmalloc(size_t n);
void *xcalloc(size_t n, size_t size);
void *xrealloc(void *p, size_t n);
char *xstrdup(const char *s);
char *xstrndup(const char *s, size_t n);
/* printf into a fresh heap string. */
char *xasprintf(const char *fmt, ...) HP_PRINTF(1, 2);

/* Non-owning view into someone else's bytes; print with "%.*s". */
struct hp_str {
	const char *p;
	size_t len;
};

/* Copy src into dst (size n), always NUL-terminating; returns strlen(src). */
size_t hp_strlcpy(char *dst, const char *src, size_t n);
/* Case-insensitive substring search (ASCII). */
const char *hp_strcasestr(const char *hay, const char *needle);
int hp_starts_with(const char *s, const char *prefix);
int hp_ends_with(const char *s, const char *suffix);
/*
 * The C library's heap (glibc; no-ops elsewhere). hp_heap_setup, once at
 * start: threads share at most HP_HEAP_ARENAS heaps. glibc's default, 8
 * per core, spread a 64-session SSM sweep over 16 heaps, each left holding
 * what its sessions freed around the probe entries kept among them (28 MB
 * at 20,000 nodes); with 1, 2 or 4 the sweep's CPU time was the same
 * within noise. hp_heap_trim, between phases: free pages go back to the
 * system, so what one phase freed does not count in the next one's peak.
 */
#define HP_HEAP_ARENAS 2
/* 1 in a build with AddressSanitizer or LeakSanitizer: it frees everything, for them to see. */
#if defined(__SANITIZE_ADDRESS__)
#define HP_LEAK_CHECKED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(leak_sanitizer)
#define HP_LEAK_CHECKED 1
#endif
#endif
#ifndef HP_LEAK_CHECKED
#define HP_LEAK_CHECKED 0
#endif
void hp_heap_setup(void);
void hp_heap_trim(void);
/*
 * Whether what lives until the process ends may be left to the end: 1
 * after hp_heap_setup (the command's own main) in a build without a leak
 * checker. Freeing a 20,000-node snapshot is 200,000 frees, a tenth of a
 * triage's instructions, for memory the exit gives back at once; tests,
 * which never call hp_heap_setup, and sanitizer builds free it all.
 */
int hp_heap_leave_at_exit(void);
/* Overwrite n bytes with zeros in a way the compiler cannot drop. */
void hp_wipe(void *p, size_t n);
/*
 * Called by hp_wipe with each block just before it is zeroed, when set
 * (NULL in the product): lets a test see which secrets are wiped.
 */
extern void (*hp_wipe_observer)(const void *p, size_t n);
/* Wipe and free a heap string (secrets). */
void hp_free_secret(char *s);
/*
 * Text to show a person, from anything (arguments, URLs, replies):
 * hp_redact_urls copies in to out (size n) with every URL's userinfo
 * replaced by three stars (the "user:pw" of "http://user:pw@host"). The
 * cleaning of control characters is include/hp/text.h's.
 */
/*
 * One --debug line on stderr: "03:40:01.123 +1.234s hpnode: debug: " (the
 * UTC time of day and the seconds since the process started), then fmt,
 * then a newline, written whole. The caller makes remote text safe.
 */
void hp_debug(const char *fmt, ...) HP_PRINTF(1, 2);
void hp_redact_urls(const char *in, char *out, size_t n);
/*
 * The one way a value goes into a command printed for a person to paste
 * (next steps, suggestions, explain, error hints): hp_shell_plain says
 * whether v is one plain POSIX shell word as it is (not empty; only ASCII
 * letters, digits and -_./:=@,+%); hp_shell_word appends v to out as
 * exactly one word: plain as it is, else in single quotes (a quote as
 * '\''), control characters shown as '?'. No value can add a word, an
 * expansion, a redirection or a second command.
 */
struct hp_buf;
int hp_shell_plain(const char *v);
/*
 * Addresses no service endpoint may be: link-local (169.254.0.0/16,
 * fe80::/10), the EC2 and ECS metadata addresses (fd00:ec2::/32), also
 * inside IPv4-mapped, IPv4-compatible and NAT64 (64:ff9b::/96) forms.
 * hp_ip_loopback: 127.0.0.0/8 and ::1 (and their mapped forms).
 * v4 in host byte order; v6 the 16 bytes of the address.
 */
int hp_ip4_link_local(uint32_t v4);
int hp_ip6_link_local(const unsigned char v6[16]);
int hp_ip6_loopback(const unsigned char v6[16]);
void hp_shell_word(const char *v, struct hp_buf *out);
/* The same into a fixed buffer (cut to n-1 bytes, never inside a quote); returns out. */
const char *hp_shell_word_s(const char *v, char *out, size_t n);

#endif
