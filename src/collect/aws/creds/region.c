/* The region: --region, AWS_REGION, AWS_DEFAULT_REGION, the profile's 'region'. */
#include "creds-int.h"

/* ^[a-z]{2}(-[a-z]+){1,2}-[0-9]+$ */
static int region_valid(const char *s)
{
	int groups = 0;

	if (!(s[0] >= 'a' && s[0] <= 'z' && s[1] >= 'a' && s[1] <= 'z'))
		return 0;
	s += 2;
	for (;;) {
		if (*s++ != '-')
			return 0;
		if (*s >= '0' && *s <= '9')
			break;
		if (!(*s >= 'a' && *s <= 'z'))
			return 0;
		while (*s >= 'a' && *s <= 'z')
			s++;
		groups++;
	}
	if (groups < 1 || groups > 2)
		return 0;
	while (*s >= '0' && *s <= '9')
		s++;
	return *s == '\0';
}

int hp_region_resolve(struct hp_sys *sys, const struct hp_profile *p, const char *flag_region,
		      char *region, size_t n, const char **cr_source, struct hp_error *e)
{
	const char *v = NULL, *src = NULL;

	if (flag_region) {
		v = flag_region;
		src = "--region";
	} else if ((v = cr_env_get(sys, "AWS_REGION"))) {
		src = "AWS_REGION";
	} else if ((v = cr_env_get(sys, "AWS_DEFAULT_REGION"))) {
		src = "AWS_DEFAULT_REGION";
	} else if ((v = cr_cfg(p, "region"))) {
		src = "config file";
	}
	if (!v)
		return hp_error_set(e, HP_ERR_NO_REGION, "no AWS region configured: pass --region, "
				    "set AWS_REGION, or set 'region' in profile '%s' of the config "
				    "file", p ? p->name : "default");
	if (!region_valid(v))
		return hp_error_set(e, HP_ERR_USAGE, "invalid region '%.64s' from %s: expected a "
				    "name like 'us-west-2'", v, src);
	if (hp_strlcpy(region, v, n) >= n)
		return hp_error_set(e, HP_ERR_USAGE, "region '%.64s' from %s is too long", v, src);
	if (cr_source)
		*cr_source = src;
	return 0;
}
