// SPDX-License-Identifier: GPL-2.0
/*
 * callchain: fault in N fresh pages from the bottom of a known call chain,
 * main -> level1 -> level2 -> level3, so that every page_fault_user event
 * has the same user call path. Built with frame pointers for 'make demo'.
 *
 * usage: callchain [pages]   (default 4)
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#define noinline __attribute__((noinline))

static noinline void level3(volatile char *p, long pages, long step)
{
	long i;

	for (i = 0; i < pages; i++)
		p[i * step] = 1;
}

static noinline void level2(volatile char *p, long pages, long step)
{
	level3(p, pages, step);
	asm volatile("" ::: "memory");	/* not a tail call */
}

static noinline void level1(volatile char *p, long pages, long step)
{
	level2(p, pages, step);
	asm volatile("" ::: "memory");
}

int main(int argc, char **argv)
{
	long pages = argc > 1 ? atol(argv[1]) : 4;
	long step = sysconf(_SC_PAGESIZE);
	char *p;

	if (pages <= 0)
		return 2;
	p = mmap(NULL, pages * step, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED) {
		perror("mmap");
		return 1;
	}
	madvise(p, pages * step, MADV_NOHUGEPAGE);
	level1(p, pages, step);
	printf("callchain: faulted %ld pages from main -> level1 -> level2 -> level3\n", pages);
	return 0;
}
