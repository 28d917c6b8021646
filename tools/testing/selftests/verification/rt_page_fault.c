// SPDX-License-Identifier: GPL-2.0
/*
 * The workload of test.d/rv_pagefault.tc: write to a fresh anonymous page
 * as a normal task ("other"), as a SCHED_FIFO task ("fifo"), or as a
 * SCHED_FIFO task that locked its memory first, as real-time programs
 * should ("fifo-locked": the write takes no page fault).
 *
 * Exits with KSFT_SKIP where the task may not become real-time.
 */
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "../kselftest.h"

static int become_fifo(void)
{
	struct sched_param param = { .sched_priority = 1 };

	if (!sched_setscheduler(0, SCHED_FIFO, &param))
		return 0;
	fprintf(stderr, "sched_setscheduler(SCHED_FIFO): %s\n", strerror(errno));
	return errno == EPERM ? KSFT_SKIP : KSFT_FAIL;
}

int main(int argc, char **argv)
{
	const char *mode = argc == 2 ? argv[1] : "";
	long page = sysconf(_SC_PAGESIZE);
	char *p;
	int ret;

	if (strcmp(mode, "other") && strcmp(mode, "fifo") &&
	    strcmp(mode, "fifo-locked")) {
		fprintf(stderr, "usage: %s other|fifo|fifo-locked\n", argv[0]);
		return KSFT_FAIL;
	}
	p = mmap(NULL, page, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED) {
		perror("mmap");
		return KSFT_FAIL;
	}
	/* Populates every mapping, this page and the stack included. */
	if (!strcmp(mode, "fifo-locked") && mlockall(MCL_CURRENT | MCL_FUTURE)) {
		perror("mlockall");
		return errno == EPERM || errno == ENOMEM ? KSFT_SKIP : KSFT_FAIL;
	}
	if (strcmp(mode, "other")) {
		ret = become_fifo();
		if (ret)
			return ret;
	}
	p[0] = 1;
	munmap(p, page);
	return KSFT_PASS;
}
