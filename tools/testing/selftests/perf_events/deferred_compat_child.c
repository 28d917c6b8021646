// SPDX-License-Identifier: GPL-2.0
/*
 * The AArch32 program deferred_compat samples. Built with APCS frames
 * (-marm -mapcs-frame), the layout arm64's in-place walker of AArch32
 * stacks follows. It spins in level3(), called through main() -> level1()
 * -> level2(), for the user time in milliseconds given as its argument, and
 * prints the three return addresses of that chain once it has them.
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>

#define ATTR(x)		__attribute__((x))
#define NOINLINE	ATTR(noinline)

static unsigned long spins;
static void *ret[3];

static NOINLINE void level3(void)
{
	int i;

	ret[0] = __builtin_return_address(0);
	/* The barrier keeps the loop, one store at a time. */
	for (i = 0; i < 1000; i++) {
		spins++;
		asm volatile("" ::: "memory");
	}
}

static NOINLINE void level2(void)
{
	ret[1] = __builtin_return_address(0);
	level3();
}

static NOINLINE void level1(void)
{
	ret[2] = __builtin_return_address(0);
	level2();
}

/* User time only: how long the kernel takes for the rest varies. */
static double user_ms(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return ru.ru_utime.tv_sec * 1e3 + ru.ru_utime.tv_usec / 1e3;
}

int main(int argc, char **argv)
{
	double end = user_ms() + (argc > 1 ? atoi(argv[1]) : 100);
	int i, printed = 0;

	/* One call site of level1(), so one return address into main(). */
	do {
		for (i = 0; i < 100; i++)
			level1();
		if (!printed++) {
			printf("%lx %lx %lx\n", (unsigned long)ret[0],
			       (unsigned long)ret[1], (unsigned long)ret[2]);
			fflush(stdout);
		}
	} while (user_ms() < end);
	return 0;
}
