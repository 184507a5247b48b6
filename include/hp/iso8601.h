/*
 * The one ISO-8601 date-time parser of hpnode, for the forms the outside
 * world sends: AWS credential expirations ("2024-05-01T10:00:00Z",
 * "2024-05-01T10:00:00.123+00:00"), dmesg --time-format iso
 * ("2024-05-01T10:11:12,345678+0000"), journalctl short-iso
 * ("2024-05-01T10:11:12+02:00") and Slurm's zone-less local times
 * ("2024-05-01T10:11:12").
 *
 * Accepted: YYYY-MM-DD, then T, t or one space, then hh:mm:ss (ss up to 60
 * for a leap second), then an optional fraction (. or , and at least one
 * digit; digits past the ninth are dropped), then an optional zone: Z, z,
 * or +hh, +hhmm, +hh:mm (or -). Months, days (leap years counted), hours,
 * minutes and offsets are range-checked; nothing is normalised.
 */
#ifndef HP_ISO8601_H
#define HP_ISO8601_H

#include <stdint.h>

struct hp_iso8601 {
	int64_t sec;   /* seconds since 1970-01-01T00:00:00Z; a zone-less time reads as UTC */
	long nsec;     /* the fraction, in nanoseconds (0 .. 999999999) */
	int zoned;     /* 1 when a zone (Z or an offset) was given */
};

/*
 * Parse the date-time at the start of s. end NULL: s must hold nothing
 * else; otherwise *end is set just past the time. Returns 0, or -1 (out
 * and *end untouched) when s is NULL or does not hold a valid time.
 */
int hp_iso8601_parse(const char *s, const char **end, struct hp_iso8601 *out);

/* Days from 1970-01-01 to a proleptic Gregorian date (negative before 1970). */
int64_t hp_days_from_civil(int64_t y, int m, int d);

#endif
