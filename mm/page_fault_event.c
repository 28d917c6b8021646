// SPDX-License-Identifier: GPL-2.0
/*
 * The key that keeps page_fault_event() from looking at its trace events,
 * and so from testing the mode of every fault, while neither has a probe.
 */
#include <linux/page_fault_event.h>

DEFINE_STATIC_KEY_FALSE(page_fault_trace_key);

int page_fault_trace_reg(void)
{
	static_branch_inc(&page_fault_trace_key);
	return 0;
}

void page_fault_trace_unreg(void)
{
	static_branch_dec(&page_fault_trace_key);
}
