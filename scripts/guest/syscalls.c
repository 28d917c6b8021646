// SPDX-License-Identifier: GPL-2.0
/*
 * syscalls: make N getppid() system calls, nothing else, so that the
 * difference of two runs' kernel instruction counts, divided by the
 * difference of their N, is the kernel's cost of one system call.
 * Used by 'make bench'.
 *
 * usage: syscalls N
 */
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	long i, n = argc > 1 ? atol(argv[1]) : 0;

	for (i = 0; i < n; i++)
		syscall(SYS_getppid);
	return 0;
}
