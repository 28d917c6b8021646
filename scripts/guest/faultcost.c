// SPDX-License-Identifier: GPL-2.0
/*
 * faultcost: count the kernel instructions this task spends per page fault.
 * Maps N pages, then touches one byte of each while a per-task
 * PERF_COUNT_HW_INSTRUCTIONS counter (kernel only) runs. Under QEMU with
 * -icount shift=0 the count is exact and repeatable.
 *
 * usage: faultcost anon-write|file-read [pages]
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

static int open_counter(void)
{
	struct perf_event_attr attr;

	memset(&attr, 0, sizeof(attr));
	attr.size = sizeof(attr);
	attr.type = PERF_TYPE_HARDWARE;
	attr.config = PERF_COUNT_HW_INSTRUCTIONS;
	attr.disabled = 1;
	attr.exclude_user = 1;
	attr.exclude_hv = 1;
	return syscall(__NR_perf_event_open, &attr, 0, -1, -1, 0);
}

static void __attribute__((noinline)) touch(volatile char *p, long pages, long step, int write)
{
	long i;

	for (i = 0; i < pages; i++) {
		if (write)
			p[i * step] = 1;
		else
			(void)p[i * step];
	}
}

int main(int argc, char **argv)
{
	long pages = argc > 2 ? atol(argv[2]) : 1000;
	long step = sysconf(_SC_PAGESIZE);
	const char *kind = argc > 1 ? argv[1] : "";
	int write = !strcmp(kind, "anon-write");
	long long count;
	char *p;
	int fd = -1, cfd;

	if ((!write && strcmp(kind, "file-read")) || pages <= 0) {
		fprintf(stderr, "usage: %s anon-write|file-read [pages]\n", argv[0]);
		return 2;
	}
	if (write) {
		p = mmap(NULL, pages * step, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	} else {
		/* A page-cache-resident tmpfs file: read faults map cached pages. */
		char path[] = "/tmp/faultcost.XXXXXX";

		fd = mkstemp(path);
		if (fd < 0 || ftruncate(fd, pages * step)) {
			perror("tmpfile");
			return 1;
		}
		unlink(path);
		p = mmap(NULL, pages * step, PROT_WRITE, MAP_SHARED, fd, 0);
		if (p != MAP_FAILED) {
			touch(p, pages, step, 1);	/* populate the page cache */
			munmap(p, pages * step);
		}
		p = mmap(NULL, pages * step, PROT_READ, MAP_PRIVATE, fd, 0);
	}
	if (p == MAP_FAILED) {
		perror("mmap");
		return 1;
	}
	madvise(p, pages * step, MADV_NOHUGEPAGE);

	cfd = open_counter();
	if (cfd < 0) {
		perror("perf_event_open(PERF_COUNT_HW_INSTRUCTIONS) (boot with ICOUNT=1 on arm64 TCG)");
		return 1;
	}
	ioctl(cfd, PERF_EVENT_IOC_RESET, 0);
	ioctl(cfd, PERF_EVENT_IOC_ENABLE, 0);
	touch(p, pages, step, write);
	ioctl(cfd, PERF_EVENT_IOC_DISABLE, 0);
	if (read(cfd, &count, sizeof(count)) != sizeof(count)) {
		perror("read counter");
		return 1;
	}
	printf("faultcost kind=%s pages=%ld kernel_instructions=%lld per_fault=%.1f\n",
	       kind, pages, count, (double)count / pages);
	return 0;
}
