// SPDX-License-Identifier: GPL-2.0
/*
 * faultcost: count the kernel instructions this task spends per page fault.
 * Maps N pages, then touches one byte of each while a per-task
 * PERF_COUNT_HW_INSTRUCTIONS counter (kernel only) runs. Under QEMU with
 * -icount shift=0 the count is exact and repeatable.
 *
 * The mean over N faults includes whatever interrupts the task took, so
 * it is measured a second time fault by fault: the counter is read before
 * and after each one, and the cost of the two reads (the least of many
 * pairs of reads with nothing between them) subtracted. The mode of those
 * counts is the cost of the common fault, free of interrupt noise (for
 * file-read, of one fault per 64 KiB: each maps the cached pages around it).
 *
 * anon-write: user-mode writes to fresh anonymous pages
 * file-read: user-mode reads of a private mapping of cached file pages
 * kernel-write: read() of one byte into each fresh anonymous page, so the
 *	kernel takes the fault (the count includes the read() around it)
 *
 * usage: faultcost anon-write|file-read|kernel-write [pages]
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

enum kind { ANON_WRITE, FILE_READ, KERNEL_WRITE };

static int src_fd = -1;	/* kernel-write: a file of one byte */

static void __attribute__((noinline)) touch(volatile char *p, long pages, long step, int kind)
{
	long i;

	for (i = 0; i < pages; i++) {
		if (kind == ANON_WRITE)
			p[i * step] = 1;
		else if (kind == FILE_READ)
			(void)p[i * step];
		else if (pread(src_fd, (char *)&p[i * step], 1, 0) != 1)
			exit(1);
	}
}

static long long read_counter(int cfd)
{
	long long count;

	if (read(cfd, &count, sizeof(count)) != sizeof(count)) {
		perror("read counter");
		exit(1);
	}
	return count;
}

static int cmp_ll(const void *a, const void *b)
{
	long long x = *(const long long *)a, y = *(const long long *)b;

	return x < y ? -1 : x > y;
}

/*
 * Count each of @pages faults on its own; print the least and the most
 * frequent count and how many of the faults had the latter.
 */
static void single_faults(int cfd, char *p, long pages, long step, int kind)
{
	long long *cost, reads = -1, mode = 0;
	long i, run = 0, best = 0;

	cost = calloc(pages, sizeof(*cost));

	if (!cost) {
		perror("calloc");
		exit(1);
	}
	for (i = 0; i < 1000; i++) {
		long long c0 = read_counter(cfd), d = read_counter(cfd) - c0;

		if (reads < 0 || d < reads)
			reads = d;
	}
	for (i = 0; i < pages; i++) {
		long long c0 = read_counter(cfd);

		touch(p + i * step, 1, step, kind);
		cost[i] = read_counter(cfd) - c0 - reads;
	}
	qsort(cost, pages, sizeof(*cost), cmp_ll);
	for (i = 0; i < pages; i++) {
		run = i && cost[i] == cost[i - 1] ? run + 1 : 1;
		if (run > best) {
			best = run;
			mode = cost[i];
		}
	}
	printf(" single_min=%lld single_mode=%lld single_mode_share=%.2f",
	       cost[0], mode, (double)best / pages);
	free(cost);
}

static char *map_pages(long pages, long step, int kind)
{
	char *p;
	int fd;

	if (kind != FILE_READ) {
		p = mmap(NULL, pages * step, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	} else {
		/* A page-cache-resident tmpfs file: read faults map cached pages. */
		char path[] = "/tmp/faultcost.XXXXXX";

		fd = mkstemp(path);
		if (fd < 0 || ftruncate(fd, pages * step)) {
			perror("tmpfile");
			exit(1);
		}
		unlink(path);
		p = mmap(NULL, pages * step, PROT_WRITE, MAP_SHARED, fd, 0);
		if (p != MAP_FAILED) {
			touch(p, pages, step, ANON_WRITE);	/* populate the page cache */
			munmap(p, pages * step);
		}
		p = mmap(NULL, pages * step, PROT_READ, MAP_PRIVATE, fd, 0);
		close(fd);
	}
	if (p == MAP_FAILED) {
		perror("mmap");
		exit(1);
	}
	madvise(p, pages * step, MADV_NOHUGEPAGE);
	return p;
}

int main(int argc, char **argv)
{
	static const char * const kinds[] = { "anon-write", "file-read", "kernel-write" };
	long pages = argc > 2 ? atol(argv[2]) : 1000;
	long step = sysconf(_SC_PAGESIZE);
	const char *name = argc > 1 ? argv[1] : "";
	long long count;
	long around = 1;
	int kind, cfd;
	char *p;

	for (kind = 0; kind < 3 && strcmp(name, kinds[kind]); kind++)
		;
	if (kind == 3 || pages <= 0) {
		fprintf(stderr, "usage: %s anon-write|file-read|kernel-write [pages]\n", argv[0]);
		return 2;
	}
	if (kind == KERNEL_WRITE) {
		char path[] = "/tmp/faultcost.XXXXXX";

		src_fd = mkstemp(path);
		if (src_fd < 0 || write(src_fd, "x", 1) != 1) {
			perror("tmpfile");
			return 1;
		}
		unlink(path);
	}
	p = map_pages(pages, step, kind);

	cfd = open_counter();
	if (cfd < 0) {
		perror("perf_event_open(PERF_COUNT_HW_INSTRUCTIONS) (boot with ICOUNT=1 on arm64 TCG)");
		return 1;
	}
	ioctl(cfd, PERF_EVENT_IOC_RESET, 0);
	ioctl(cfd, PERF_EVENT_IOC_ENABLE, 0);
	touch(p, pages, step, kind);
	ioctl(cfd, PERF_EVENT_IOC_DISABLE, 0);
	count = read_counter(cfd);
	printf("faultcost kind=%s pages=%ld kernel_instructions=%lld per_fault=%.1f",
	       name, pages, count, (double)count / pages);

	/*
	 * A read fault of a file maps the cached pages around it too
	 * (fault_around_bytes, 64 KiB by default): one access per 64 KiB.
	 */
	if (kind == FILE_READ && step < 65536) {
		around = 65536 / step;
		step = 65536;
	}
	p = map_pages(pages * around, step / around, kind);
	ioctl(cfd, PERF_EVENT_IOC_ENABLE, 0);
	single_faults(cfd, p, pages, step, kind);
	printf("\n");
	return 0;
}
