/*
 * The revision the binary was built from: the Makefile writes
 * hp_revision.h from `git rev-parse` at build time (nothing outside a
 * git checkout).
 */
#include <stddef.h>

#include "hp/util.h"
#include "hp_revision.h"

const char *hp_revision(void)
{
#ifdef HP_REVISION
	return HP_REVISION;
#else
	return NULL;
#endif
}
