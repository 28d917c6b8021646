// SPDX-License-Identifier: GPL-2.0
/*
 * microbench: map N pages at the fixed address 0xcafe0000 and write one
 * byte to each, so every page takes exactly one user write fault at a known
 * address from one store instruction. Used by 'make demo' and 'make bench'.
 *
 * usage: microbench [pages]   (default 16)
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#define BASE_ADDR 0xcafe0000UL

static void __attribute__((noinline)) touch(volatile char *p, long pages, long step)
{
	long i;

	for (i = 0; i < pages; i++)
		p[i * step] = 1;
}

int main(int argc, char **argv)
{
	long pages = argc > 1 ? atol(argv[1]) : 16;
	long step = sysconf(_SC_PAGESIZE);
	char *p;

	if (pages <= 0) {
		fprintf(stderr, "usage: %s [pages > 0]\n", argv[0]);
		return 2;
	}
	p = mmap((void *)BASE_ADDR, pages * step, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
	if (p == MAP_FAILED) {
		perror("mmap at 0xcafe0000");
		return 1;
	}
	madvise(p, pages * step, MADV_NOHUGEPAGE);
	touch(p, pages, step);
	printf("microbench: wrote %ld pages at %p; the store is in touch(), which starts at %p\n",
	       pages, (void *)p, (void *)touch);
	return 0;
}
