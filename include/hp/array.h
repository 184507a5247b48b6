/*
 * hp_array: the one growable array of hpnode, for elements of any type.
 *
 * An array is any struct with these three members:
 *
 *     T *v;           the elements
 *     size_t n;       how many are in use (v[0] .. v[n-1])
 *     size_t alloc;   how many fit before it must grow
 *
 * declared with HP_ARRAY(T) (an unnamed struct: a member, a variable or a
 * typedef) or written out in a named struct (struct hp_findings). A zeroed
 * array (HP_ARRAY_INIT, memset, a static) is empty and ready for use.
 *
 * Invariants:
 *  - n <= alloc, and v is NULL exactly when alloc is 0;
 *  - the room doubles when it runs out (8 elements first), so n pushes
 *    cost O(n) together; any pointer into v is good only until the next
 *    push or reserve, which may move the elements;
 *  - running out of memory, or a size that would overflow, ends the
 *    process (like xmalloc): callers never test for NULL;
 *  - hp_array_push() returns the new last element, zero-filled;
 *  - the array owns v but not what the elements point to: free those
 *    first, then hp_array_release(), which leaves the array empty and
 *    reusable.
 *
 * The macros evaluate their array argument more than once: pass a plain
 * pointer expression (&list, p->items), never one with side effects.
 */
#ifndef HP_ARRAY_H
#define HP_ARRAY_H

#include <stdlib.h>
#include <string.h>

#define HP_ARRAY(T) struct { T *v; size_t n, alloc; }
#define HP_ARRAY_INIT { NULL, 0, 0 }

/*
 * The storage behind the macros: v (room for *alloc elements of size
 * bytes, n of them in use) grown to hold at least n + more; returns the
 * new v and updates *alloc. An array whose members keep other names (a
 * public struct others read, such as struct hp_refdoc, or a private one
 * whose names much code reads) calls it directly, with the same rules:
 *
 *	d->sec = hp_array_grow(d->sec, &sec_alloc, d->nsec, 1, sizeof(*d->sec));
 */
void *hp_array_grow(void *v, size_t *alloc, size_t n, size_t more, size_t size);

/* Make room for `more` further elements without adding any. */
#define hp_array_reserve(a, more) \
	((a)->v = hp_array_grow((a)->v, &(a)->alloc, (a)->n, (more), sizeof(*(a)->v)))

/* Add one zero-filled element at the end; returns a pointer to it. */
#define hp_array_push(a) \
	(hp_array_reserve((a), 1), memset(&(a)->v[(a)->n], 0, sizeof(*(a)->v)), \
	 &(a)->v[(a)->n++])

/* Add a copy of x at the end (x must not point into the array itself). */
#define hp_array_append(a, x) ((void)(*hp_array_push(a) = (x)))

/* Sort the elements with qsort (an empty array is left alone). */
#define hp_array_sort(a, cmp) \
	((a)->n ? qsort((a)->v, (a)->n, sizeof(*(a)->v), (cmp)) : (void)0)

/* Free the elements' storage; the array is empty and reusable afterwards. */
#define hp_array_release(a) ((void)(free((a)->v), (a)->v = NULL, (a)->n = 0, (a)->alloc = 0))

#endif
