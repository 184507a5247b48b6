/*
 * ISO-8601 date-times (include/hp/iso8601.h): a strict reader with the
 * zone applied, using civil-date arithmetic rather than the C library's
 * time zone machinery (nothing here depends on TZ or the locale).
 */
#include <stddef.h>

#include "hp/iso8601.h"

/* n decimal digits at *s into *v, advancing *s; -1 when they are not all digits. */
static int digits(const char **s, int n, int *v)
{
	int x = 0, i;

	for (i = 0; i < n; i++) {
		char c = (*s)[i];

		if (c < '0' || c > '9')
			return -1;
		x = x * 10 + (c - '0');
	}
	*s += n;
	*v = x;
	return 0;
}

static int leap(int y)
{
	return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
}

static int days_in_month(int y, int m)
{
	static const int days[] = { 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31 };

	return m == 2 && leap(y) ? 29 : days[m - 1];
}

int64_t hp_days_from_civil(int64_t y, int m, int d)
{
	/* Howard Hinnant's days_from_civil: years start in March. */
	int64_t era, yoe, doy, doe;

	y -= m <= 2;
	era = (y >= 0 ? y : y - 399) / 400;
	yoe = y - era * 400;
	doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
	doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
	return era * 146097 + doe - 719468;
}

/* "Z", "+hh", "+hhmm", "+hh:mm" at *s: seconds east of UTC into *off. */
static int zone(const char **s, int *zoned, int *off)
{
	const char *p = *s;
	int sign, h, m = 0;

	*zoned = 0;
	*off = 0;
	if (*p == 'Z' || *p == 'z') {
		*s = p + 1;
		*zoned = 1;
		return 0;
	}
	if (*p != '+' && *p != '-')
		return 0;
	sign = *p++ == '-' ? -1 : 1;
	if (digits(&p, 2, &h) || h > 23)
		return -1;
	if (p[0] == ':' && p[1] >= '0' && p[1] <= '9')
		p++;
	if (*p >= '0' && *p <= '9' && (digits(&p, 2, &m) || m > 59))
		return -1;
	*s = p;
	*zoned = 1;
	*off = sign * (h * 3600 + m * 60);
	return 0;
}

int hp_iso8601_parse(const char *s, const char **end, struct hp_iso8601 *out)
{
	const char *p = s;
	int y, mo, d, h, mi, sec, zoned, off;
	long nsec = 0, scale = 100000000;

	if (!s || digits(&p, 4, &y) || *p++ != '-' || digits(&p, 2, &mo) || *p++ != '-' ||
	    digits(&p, 2, &d))
		return -1;
	if (*p != 'T' && *p != 't' && *p != ' ')
		return -1;
	p++;
	if (digits(&p, 2, &h) || *p++ != ':' || digits(&p, 2, &mi) || *p++ != ':' ||
	    digits(&p, 2, &sec))
		return -1;
	if (mo < 1 || mo > 12 || d < 1 || d > days_in_month(y, mo) || h > 23 || mi > 59 ||
	    sec > 60)
		return -1;
	if (*p == '.' || *p == ',') {
		if (p[1] < '0' || p[1] > '9')
			return -1;
		for (p++; *p >= '0' && *p <= '9'; p++, scale /= 10)
			nsec += (*p - '0') * scale;
	}
	if (zone(&p, &zoned, &off))
		return -1;
	if (!end && *p)
		return -1;
	out->sec = hp_days_from_civil(y, mo, d) * 86400 + h * 3600 + mi * 60 + sec - off;
	out->nsec = nsec;
	out->zoned = zoned;
	if (end)
		*end = p;
	return 0;
}
