/*
 * The storage of hp_array (include/hp/array.h): doubling growth with the
 * overflow checks the macros rely on.
 */
#include <stdint.h>

#include "hp/array.h"
#include "hp/util.h"

/* The first allocation holds this many elements. */
#define FIRST_ROOM 8

void *hp_array_grow(void *v, size_t *alloc, size_t n, size_t more, size_t size)
{
	size_t want, room;

	if (!size || more > SIZE_MAX - n)
		hp_die("array size overflow");
	want = n + more;
	if (v && want <= *alloc)
		return v;
	room = *alloc ? *alloc : FIRST_ROOM;
	while (room < want) {
		if (room > SIZE_MAX / 2)
			hp_die("array size overflow");
		room *= 2;
	}
	if (room > SIZE_MAX / size)
		hp_die("array size overflow");
	v = xrealloc(v, room * size);
	*alloc = room;
	return v;
}
