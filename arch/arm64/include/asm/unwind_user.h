/* SPDX-License-Identifier: GPL-2.0 */
#ifndef __ASM_UNWIND_USER_H
#define __ASM_UNWIND_USER_H

#ifdef CONFIG_UNWIND_USER

#include <asm/compiler.h>
#include <asm/ptrace.h>

static inline int unwind_user_word_size(struct pt_regs *regs)
{
	/*
	 * AArch32 code has no single frame layout to follow (A32 and T32
	 * use different frame pointer registers, and the APCS frame differs
	 * from the AAPCS one), so rather than report a wrong stack, compat
	 * tasks are not unwound at all: unwind_deferred_request() refuses
	 * them, and perf walks their stacks in place.
	 */
	if (compat_user_mode(regs))
		return 0;
	return sizeof(long);
}

#endif /* CONFIG_UNWIND_USER */

#ifdef CONFIG_HAVE_UNWIND_USER_FP

/*
 * An AAPCS64 frame record is two 64-bit words, the caller's x29 and the
 * return address (x30), and x29 points at it. Taking fp + 16 as the CFA
 * puts the return address at CFA - 8 and the caller's frame record
 * pointer at CFA - 16. Only native tasks are unwound, so @ws is 8.
 */
#define ARCH_INIT_USER_FP_FRAME(ws)			\
	.cfa_off	=  2 * (ws),			\
	.ra_off		= -1 * (ws),			\
	.fp_off		= -2 * (ws),			\
	.use_fp		= true,

/*
 * Until a function has linked its own frame record into x29, its return
 * address is still in x30 and x29 is the caller's frame record: the
 * return address comes from the register, and the caller's frame from
 * x29 as it is. unwind_user_at_function_start() tells that stretch of a
 * prologue by the instruction at the pc.
 */
#define ARCH_INIT_USER_FP_ENTRY_FRAME(ws)		\
	.cfa_off	= 0,				\
	.ra_off		= 0,				\
	.fp_off		= 0,				\
	.use_fp		= false,			\
	.ra_in_reg	= true,

bool unwind_user_at_function_start(const struct pt_regs *regs);
#define unwind_user_at_function_start unwind_user_at_function_start

static inline int unwind_user_get_ra_reg(struct pt_regs *regs, unsigned long *ra)
{
	*ra = regs->regs[30];
	return 0;
}

#define unwind_user_get_ra_reg unwind_user_get_ra_reg

/* Saved return addresses may be signed (pac-ret): keep the address only. */
static inline unsigned long unwind_user_strip_ra(unsigned long ra)
{
	return ptrauth_strip_user_insn_pac(ra);
}

#define unwind_user_strip_ra unwind_user_strip_ra

#endif /* CONFIG_HAVE_UNWIND_USER_FP */

#endif /* __ASM_UNWIND_USER_H */
