/*
 * Private to the probe decoder (src/core/facts/probe-frame.c, parse-*.c): the
 * framed blocks of one probe output, the parser of each block, and the
 * small text helpers the parsers share. Lines are cleaned copies (no CR,
 * no escape sequences), NUL-terminated, read-only.
 */
#ifndef HP_PROBE_INT_H
#define HP_PROBE_INT_H

#include <cjson/cJSON.h>
#include <stddef.h>

#include "hp/array.h"
#include "hp/facts.h"

/* Lines kept per block; the script sends at most 3000. */
#define PB_MAX_LINES 5000
/* A field copied out of a line is cut at this size. */
#define PB_FIELD 256
/* Kernel events kept per node (the newest). */
#define PB_MAX_EVENTS 400
/* GPUs per node the parsers track. */
#define PB_MAX_GPUS 64

struct pb_block {
	char name[32];
	int rc;            /* exit status from the END marker, -1 when none came */
	int ended;
	size_t nlines;     /* every line counts, kept or not */
	HP_ARRAY(const char *) lines;  /* the first PB_MAX_LINES, into pb_input.store */
};

struct pb_input {
	HP_ARRAY(struct pb_block) blocks;
	int done;          /* the DONE marker arrived */
	char *store;       /* the kept lines, back to back */
};

/*
 * How one probe's lines are kept. The node probe keeps TABs and bytes as
 * they came (its parsers split on TABs); the NCCL probes' lines are text
 * (a TAB becomes a space, a byte that is not UTF-8 a '?') cut at clip bytes.
 */
struct pb_frame_opts {
	size_t max_lines;  /* lines kept per block */
	size_t clip;       /* bytes kept per line; 0: the whole line */
	int text;
};
extern const struct pb_frame_opts pb_node_frame, pb_nccl_frame;
/* Split text (NULL reads as empty) into blocks. */
void pb_frame(struct pb_input *in, const char *text, size_t len, const struct pb_frame_opts *o);
void pb_release(struct pb_input *in);
/* The first block with this name, or NULL. */
const struct pb_block *pb_find(const struct pb_input *in, const char *name);

/* Text helpers. */
/* Copy at most n bytes of s, trimmed of blanks on both ends, into out (size PB_FIELD). */
void pb_copy_trim(const char *s, size_t n, char out[PB_FIELD]);
/* Split s at sep into at most max trimmed fields; returns the number found. */
size_t pb_split(const char *s, char sep, char (*out)[PB_FIELD], size_t max);
/* Whitespace-separated words of s, at most max; returns the number found. */
size_t pb_words(const char *s, char (*out)[PB_FIELD], size_t max);
/* A whole decimal number ("12", "-0.5", "+3e2"); 0 when s is not one. */
int pb_num(const char *s, double *out);
/* A whole non-negative integer that fits in a double exactly; 0 otherwise. */
int pb_count(const char *s, double *out);
/* s starts with prefix, ignoring ASCII case. */
int pb_prefix_ci(const char *s, const char *prefix);
/* s starts with prefix, case and all. */
int pb_prefix(const char *s, const char *prefix);
/* s past its leading blanks. */
const char *pb_skip(const char *s);
/* Epoch seconds of an ISO-8601 time at the start of s ("2024-05-01T10:11:12,5+00:00",
   "...+0000", "...Z"); sets *end past it. 0 when s does not start with one. */
int pb_iso_time(const char *s, double *epoch, const char **end);

/* Facts helpers: the object (array) under key, created when missing. */
cJSON *pb_obj(cJSON *parent, const char *key);
cJSON *pb_arr(cJSON *parent, const char *key);
/* Set key to v; a v that is not finite leaves key absent. */
void pb_set_num(cJSON *obj, const char *key, double v);
void pb_set_str(cJSON *obj, const char *key, const char *v);
void pb_set_bool(cJSON *obj, const char *key, int v);
/* Record the block's exit status as "rc" and "present" (false for 127) in obj. */
void pb_set_rc(cJSON *obj, const struct pb_block *b);
/* The object under key (made when missing) with b's exit status recorded (pb_set_rc). */
cJSON *pb_rc_obj(cJSON *parent, const char *key, const struct pb_block *b);
/*
 * How a block parser starts: the block name, or NULL when it did not
 * come; else its facts object key in *obj (pb_rc_obj).
 */
const struct pb_block *pb_start(const struct pb_input *in, const char *name, cJSON *facts,
			       const char *key, cJSON **obj);
/* The block ended with status 127: its command is not installed. */
int pb_not_installed(const struct pb_block *b);
/* First non-blank kept line of b (for error texts), or NULL. */
const char *pb_first_line(const struct pb_block *b);
/* Why b gave nothing, as key of obj: "timed out", its first line, or "no output". */
void pb_set_error(cJSON *obj, const char *key, const struct pb_block *b);

/* One parser per source; each reads its blocks from in and adds to facts. */
void pb_parse_node(const struct pb_input *in, cJSON *facts);
void pb_parse_df(const struct pb_input *in, cJSON *facts);
void pb_parse_mountinfo(const struct pb_input *in, cJSON *facts);
void pb_parse_memory(const struct pb_input *in, cJSON *facts);
void pb_parse_kmsg(const struct pb_input *in, cJSON *facts);
void pb_parse_time(const struct pb_input *in, cJSON *facts);
void pb_parse_services(const struct pb_input *in, cJSON *facts);
void pb_parse_nvidia(const struct pb_input *in, cJSON *facts);
void pb_parse_pci(const struct pb_input *in, cJSON *facts);
void pb_parse_dcgm(const struct pb_input *in, cJSON *facts);
void pb_parse_neuron(const struct pb_input *in, cJSON *facts);
void pb_parse_efa(const struct pb_input *in, cJSON *facts);
void pb_parse_modules(const struct pb_input *in, cJSON *facts);
void pb_parse_nvlink(const struct pb_input *in, cJSON *facts);
void pb_parse_nvvs(const struct pb_input *in, cJSON *facts);
void pb_parse_netdev(const struct pb_input *in, cJSON *facts);
void pb_parse_provision(const struct pb_input *in, cJSON *facts);
void pb_parse_fabricmanager(const struct pb_input *in, cJSON *facts);
void pb_parse_pci_link(const struct pb_input *in, cJSON *facts);
void pb_parse_imds(const struct pb_input *in, cJSON *facts);

#endif
