// SPDX-License-Identifier: GPL-2.0
/*
 * Two more users of the deferred user unwinder, for the perf_events
 * selftest deferred_users.sh. The files are in
 * <debugfs>/unwind_deferred_test/.
 *
 * Writing a PID to "exec" arms a one-shot probe on sched_prepare_exec:
 * when that task next execs, the first user requests an unwind, so that
 * the request is pending when exec flushes it. The first user's callback,
 * which exec runs, looks whether the task work is still queued and, if it
 * is not, requests an unwind for the second user: a request by another
 * user while exec runs the callbacks, as an interrupt or NMI could make.
 *
 * Writing to "request" makes the first user request an unwind for the
 * writer; its callback requests one again, which must fail with -EALREADY
 * (whether the task has an unwind cache or not: it tells which). Writing
 * "nocache" there also makes the next fault injection point the task
 * passes fail (as /proc/<pid>/fail-nth does): the allocation of its unwind
 * cache, with failslab, when the task has none yet.
 *
 * "result" tells what happened.
 */
#include <linux/debugfs.h>
#include <linux/init.h>
#include <linux/mutex.h>
#include <linux/sched.h>
#include <linux/seq_file.h>
#include <linux/string.h>
#include <linux/uaccess.h>
#include <linux/unwind_deferred.h>
#include <trace/events/sched.h>

#define TEST_ENTRIES	16

struct test_user {
	struct unwind_work work;
	int calls;
	u64 cookie;
	unsigned int nr;
	unsigned long entries[TEST_ENTRIES];
};

static struct test_user first, second;
static DEFINE_MUTEX(test_lock);
static pid_t test_pid;
static bool test_again;
static struct {
	int first_ret;
	u64 first_cookie;
	bool queued;
	bool second_requested;
	int second_ret;
	u64 second_cookie;
	bool cache;
	int again_ret;
	u64 again_cookie;
} res;

static bool work_queued(struct callback_head *cb)
{
	struct callback_head *w;

	for (w = READ_ONCE(current->task_works); w; w = READ_ONCE(w->next)) {
		if (w == cb)
			return true;
	}
	return false;
}

static void record(struct test_user *u, struct unwind_stacktrace *trace,
		   u64 cookie)
{
	u->calls++;
	u->cookie = cookie;
	u->nr = trace->nr;
	memcpy(u->entries, trace->entries,
	       min_t(unsigned int, trace->nr, TEST_ENTRIES) * sizeof(long));
}

static void first_callback(struct unwind_work *work,
			   struct unwind_stacktrace *trace, u64 cookie)
{
	record(&first, trace, cookie);
	if (first.calls != 1)
		return;
	if (test_again) {
		res.cache = current->unwind_info.cache;
		res.again_ret = unwind_deferred_request(&first.work,
							&res.again_cookie);
		return;
	}
	/*
	 * A request now puts the task work on the list again; if it still
	 * is on it, that would corrupt the list, so do not make it.
	 */
	res.queued = work_queued(&current->unwind_info.work);
	if (res.queued)
		return;
	res.second_requested = true;
	res.second_ret = unwind_deferred_request(&second.work,
						 &res.second_cookie);
}

static void second_callback(struct unwind_work *work,
			    struct unwind_stacktrace *trace, u64 cookie)
{
	record(&second, trace, cookie);
}

static void probe_prepare_exec(void *data, struct task_struct *task,
			       struct linux_binprm *bprm)
{
	if (!READ_ONCE(test_pid) || task->pid != READ_ONCE(test_pid))
		return;
	test_pid = 0;
	res.first_ret = unwind_deferred_request(&first.work, &res.first_cookie);
}

static void test_reset(bool again)
{
	memset(&res, 0, sizeof(res));
	first.calls = 0;
	second.calls = 0;
	test_again = again;
	WRITE_ONCE(test_pid, 0);
}

static ssize_t exec_write(struct file *file, const char __user *buf,
			  size_t count, loff_t *ppos)
{
	int pid, ret;

	ret = kstrtoint_from_user(buf, count, 0, &pid);
	if (ret)
		return ret;
	if (pid <= 0)
		return -EINVAL;
	guard(mutex)(&test_lock);
	test_reset(false);
	WRITE_ONCE(test_pid, pid);
	return count;
}

static const struct file_operations exec_fops = {
	.write = exec_write,
	.llseek = noop_llseek,
};

static ssize_t request_write(struct file *file, const char __user *buf,
			     size_t count, loff_t *ppos)
{
	char arg[16];
	bool nocache;

	if (strncpy_from_user(arg, buf, min(count, sizeof(arg) - 1)) < 0)
		return -EFAULT;
	arg[min(count, sizeof(arg) - 1)] = '\0';
	nocache = sysfs_streq(arg, "nocache");
	if (nocache && !IS_ENABLED(CONFIG_FAULT_INJECTION))
		return -EOPNOTSUPP;

	guard(mutex)(&test_lock);
	test_reset(true);
	res.first_ret = unwind_deferred_request(&first.work, &res.first_cookie);
#ifdef CONFIG_FAULT_INJECTION
	/* Nothing allocates between here and the task work. */
	if (nocache)
		WRITE_ONCE(current->fail_nth, 1);
#endif
	return count;
}

static const struct file_operations request_fops = {
	.write = request_write,
	.llseek = noop_llseek,
};

static bool same_stack(void)
{
	return first.nr == second.nr &&
	       !memcmp(first.entries, second.entries,
		       min_t(unsigned int, first.nr, TEST_ENTRIES) * sizeof(long));
}

static int result_show(struct seq_file *m, void *v)
{
	guard(mutex)(&test_lock);
	seq_printf(m, "first_request %d\n", res.first_ret);
	seq_printf(m, "first_calls %d\n", first.calls);
	seq_printf(m, "first_entries %u\n", first.nr);
	seq_printf(m, "first_cookie_answered %d\n",
		   first.calls && first.cookie == res.first_cookie);
	seq_printf(m, "work_queued_in_callback %d\n", res.queued);
	seq_printf(m, "second_requested %d\n", res.second_requested);
	seq_printf(m, "second_request %d\n", res.second_ret);
	seq_printf(m, "second_calls %d\n", second.calls);
	seq_printf(m, "second_cookie_answered %d\n",
		   second.calls && second.cookie == res.second_cookie);
	seq_printf(m, "same_cookie %d\n", res.first_cookie == res.second_cookie);
	seq_printf(m, "same_stack %d\n", same_stack());
	seq_printf(m, "cache %d\n", res.cache);
	seq_printf(m, "again_request %d\n", res.again_ret);
	seq_printf(m, "again_ealready %d\n", res.again_ret == -EALREADY);
	seq_printf(m, "again_cookie %llu\n", res.again_cookie);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(result);

static int __init test_unwind_deferred_init(void)
{
	struct dentry *dir;
	int ret;

	ret = unwind_deferred_init(&first.work, first_callback);
	if (ret)
		return ret;
	ret = unwind_deferred_init(&second.work, second_callback);
	if (ret)
		goto cancel_first;
	ret = register_trace_sched_prepare_exec(probe_prepare_exec, NULL);
	if (ret)
		goto cancel_second;
	dir = debugfs_create_dir("unwind_deferred_test", NULL);
	debugfs_create_file("exec", 0200, dir, NULL, &exec_fops);
	debugfs_create_file("request", 0200, dir, NULL, &request_fops);
	debugfs_create_file("result", 0400, dir, NULL, &result_fops);
	return 0;

cancel_second:
	unwind_deferred_cancel(&second.work);
cancel_first:
	unwind_deferred_cancel(&first.work);
	return ret;
}
late_initcall(test_unwind_deferred_init);
