// SPDX-License-Identifier: GPL-2.0
/*
 * Background memory churn for make bench's fragmentation part, as on a
 * long-running device: until SIGTERM,
 *
 *   churn run FILE ANON_MIB    reads FILE (a disk) over and over, filling
 *                              the page cache; keeps about ANON_MIB of
 *                              anonymous memory in mappings of random sizes
 *                              that come and go; creates and removes small
 *                              files in the current directory (inodes and
 *                              dentries: kernel memory that can't move)
 *   churn thp MIB              maps MIB of anonymous memory with
 *                              MADV_HUGEPAGE and touches it once (the caller
 *                              reads thp_fault_alloc/thp_fault_fallback);
 *                              prints the page size as page_kib=N
 *
 * Random choices come from a fixed seed, so every run asks for the same.
 */
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#define SLOTS	256

static unsigned long long rnd_state = 0x9e3779b97f4a7c15ULL;

static unsigned long rnd(unsigned long n)
{
	rnd_state ^= rnd_state << 13;
	rnd_state ^= rnd_state >> 7;
	rnd_state ^= rnd_state << 17;
	return rnd_state % n;
}

static void die(const char *what)
{
	perror(what);
	exit(1);
}

static void cache(const char *file)
{
	static char buf[1 << 20];
	int fd = open(file, O_RDONLY);

	if (fd < 0)
		die(file);
	for (;;) {
		ssize_t n = read(fd, buf, sizeof(buf));

		if (n < 0)
			die("read");
		if (n == 0 && lseek(fd, 0, SEEK_SET) < 0)
			die("lseek");
	}
}

/* Mappings of 4 KiB to 1 MiB, about @mib in all, replaced at random. */
static void anon(unsigned long mib)
{
	static void *addr[SLOTS];
	static size_t len[SLOTS];
	unsigned long budget = mib << 20, used = 0, page = sysconf(_SC_PAGESIZE);

	for (;;) {
		unsigned long i = rnd(SLOTS);
		size_t want = (1 + rnd(256)) * 4096;

		if (addr[i]) {
			munmap(addr[i], len[i]);
			used -= len[i];
			addr[i] = NULL;
		}
		if (used + want > budget)
			continue;
		addr[i] = mmap(NULL, want, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (addr[i] == MAP_FAILED)
			die("mmap");
		len[i] = want;
		used += want;
		for (size_t off = 0; off < want; off += page)
			((volatile char *)addr[i])[off] = 1;
	}
}

static void files(void)
{
	char name[32];

	for (;;) {
		int fd;

		snprintf(name, sizeof(name), "churn.%lu", rnd(4096));
		if (unlink(name) == 0)
			continue;
		fd = open(name, O_CREAT | O_WRONLY, 0600);
		if (fd < 0)
			die(name);
		close(fd);
	}
}

static void thp(unsigned long mib)
{
	size_t len = mib << 20;
	char *p = mmap(NULL, len + (2 << 20), PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		die("mmap");
	p = (char *)(((unsigned long)p + (2 << 20) - 1) & ~((2UL << 20) - 1));
	if (madvise(p, len, MADV_HUGEPAGE))
		die("madvise(MADV_HUGEPAGE)");
	for (size_t off = 0; off < len; off += 4096)
		p[off] = 1;
	printf("page_kib=%ld\n", sysconf(_SC_PAGESIZE) / 1024);
}

static pid_t child(void (*fn)(const char *, unsigned long), const char *s,
		   unsigned long n)
{
	pid_t pid = fork();

	if (pid < 0)
		die("fork");
	if (pid == 0) {
		fn(s, n);
		exit(0);
	}
	return pid;
}

static void cache_fn(const char *s, unsigned long n) { cache(s); }
static void anon_fn(const char *s, unsigned long n) { anon(n); }
static void files_fn(const char *s, unsigned long n) { files(); }

static volatile sig_atomic_t stop;

static void on_term(int sig)
{
	stop = 1;
}

int main(int argc, char **argv)
{
	pid_t pids[3];
	int i;

	if (argc == 3 && !strcmp(argv[1], "thp")) {
		thp(strtoul(argv[2], NULL, 0));
		return 0;
	}
	if (argc != 4 || strcmp(argv[1], "run")) {
		fprintf(stderr, "usage: churn run FILE ANON_MIB | churn thp MIB\n");
		return 2;
	}
	signal(SIGTERM, on_term);
	pids[0] = child(cache_fn, argv[2], 0);
	pids[1] = child(anon_fn, NULL, strtoul(argv[3], NULL, 0));
	pids[2] = child(files_fn, NULL, 0);
	while (!stop)
		pause();
	for (i = 0; i < 3; i++) {
		kill(pids[i], SIGKILL);
		waitpid(pids[i], NULL, 0);
	}
	return 0;
}
