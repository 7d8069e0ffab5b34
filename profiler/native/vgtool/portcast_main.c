/* Portcast's Valgrind tool: records the Portcast trace (docs/trace-format.md) of marked regions.
 *
 * Per guest instruction it emits micro-op records in the order LOADs, compute, STOREs:
 *   - the compute class comes from the VEX IR ops whose values reach a register, a stored value or a
 *     branch condition (address arithmetic does not count): integer / FP add-like, mul, div, special, the FP
 *     ones single (FP_*) or double precision (FP64_*: F64 operands or results, vector ops on 64-bit lanes);
 *     conditional branches (with outcome), jumps, calls and returns come from the IR's exits and jump kinds;
 *   - LOAD/STORE carry the effective address and size of every memory access of the instruction;
 *   - register dependences: guest-state locations (8-byte granules of the guest state) read through
 *     GET and written through PUT, followed through IR temporaries inside the instruction, and to the
 *     earlier instructions of the same superblock whose temporaries it reads. Each write of a location
 *     gets a new dependency token (location + 256 * version), so that one instruction writing several
 *     locations (a register and the flags) is one destination token.
 * Records go, in binary (42 bytes each, column by column, see record.py), to the file or FIFO named by --out, framed as
 * messages: u32 type, u32 payload length, payload; with --shm the record columns are written straight into
 * slots of a shared-memory ring instead, and only a small RECORDS_SHM message per block goes to --out.
 *
 * Written for Portcast from the VEX IR documentation in libvex_ir.h and pub_tool_*.h.
 */
#include "pub_tool_basics.h"
#include "pub_tool_tooliface.h"
#include "pub_tool_libcassert.h"
#include "pub_tool_libcbase.h"
#include "pub_tool_libcfile.h"
#include "pub_tool_libcprint.h"
#include "pub_tool_libcproc.h"
#include "pub_tool_threadstate.h"
#include "pub_tool_transtab.h"
#include "pub_tool_mallocfree.h"
#include "pub_tool_options.h"
#include "pub_tool_machine.h"
#include "pub_tool_debuginfo.h"
#include "pub_tool_clreq.h"
#include "pub_tool_vki.h"
#include "libvex_guest_amd64.h"

#define PC_REQ_BASE VG_USERREQ_TOOL_BASE('P', 'C')
#define PC_REQ_REGION_START (PC_REQ_BASE + 1)
#define PC_REQ_REGION_END (PC_REQ_BASE + 2)
#define PC_REQ_THREAD (PC_REQ_BASE + 3)

/* message types of the output stream */
#define MSG_HELLO 0
#define MSG_REGION_START 1
#define MSG_RECORDS 2
#define MSG_REGION_END 3
#define MSG_STATIC 4
#define MSG_FINI 5
#define MSG_RECORDS_SHM 6 /* u32 slot, u32 n, u32 stride: n records in slot `slot` of the ring, column c
                             at byte stride * (sum of the item sizes of the columns before c) */

/* the shared-memory ring (--shm, --shm-slots, --credits): the tool writes its records straight into slots of
   a file the reader maps too, and only a small RECORDS_SHM message goes through the FIFO; the reader writes
   one byte to the credits FIFO per slot it has finished with (slots are used and freed in order) */
#define SHM_SLOT_BYTES (1 << 21)
/* Valgrind core (libcoregrind): a MAP_SHARED file mapping in Valgrind's own address space */
extern SysRes VG_(am_shared_mmap_file_float_valgrind)(SizeT length, UInt prot, Int fd, Off64T offset);

/* operation classes (core/trace_schema.py Op) */
enum { OP_INT_ALU = 0, OP_INT_MUL, OP_INT_DIV, OP_INT_REM, OP_FP_ALU, OP_FP_MUL, OP_FP_DIV, OP_FP_SPECIAL,
       OP_LOAD, OP_STORE, OP_BRANCH, OP_JUMP, OP_CALL, OP_RET, OP_MOVE, OP_OTHER,
       OP_FP64_ALU, OP_FP64_MUL, OP_FP64_DIV, OP_FP64_SPECIAL, N_OP_CLASSES };
#define FP64_OFFSET (OP_FP64_ALU - OP_FP_ALU)


#define N_SLOTS 8 /* static id = 8 * instruction number + slot + 1; loads 0..3, compute 4, stores 5..6 */
#define SLOT_COMPUTE 4
#define SLOT_STORE0 5
#define MAX_ACC 6
#define MAX_UOPS 8
#define MAX_WLOCS 24
#define MAX_ITEMS 64
#define TEMP_TOKEN 65536
#define N_LOCS 256
#define LOC_SB_VALUE 255 /* pseudo location: a value passed to later instructions only through a temporary */
#define MAX_SB_INSTRS 512

/* a source of a micro-op, resolved to a token at run time */
enum { IT_NONE = 0, IT_LOC, IT_PREV, IT_TEMP, IT_COMPUTE };
typedef struct { UChar kind; UShort val; } Item;

enum { D_NONE = 0, D_INSTR, D_TEMP, D_COMPUTE };
typedef struct {
   Int pc;
   Int size;
   UChar op, nsrc, dmode, acc, dval;
   Item src[3];
   /* where pc_instr reads each source token and the destination token at run time (bound from src and
      dmode when the descriptor is built): a location's current token, an earlier instruction's token, a
      constant, or this instruction's destination / compute result */
   const Int* sp[3];
   const Int* dp;
} UOp;

typedef struct {
   Int base;
   UShort sb_index;
   UChar n_uops, n_acc, is_cond, n_wlocs, fallback_op, dropped;
   UShort wlocs[MAX_WLOCS];
   UOp uop[MAX_UOPS];
} InstrDesc;

/* ------------------------------------------------------------------ options and run-time state */
static const HChar* clo_out = NULL;
static const HChar* clo_region = NULL; /* record only regions of this name (default: all) */
static Bool clo_all = False;           /* record the whole program as one region "program" */
static const HChar* clo_shm = NULL;     /* ring file (created and sized by the reader) */
static const HChar* clo_credits = NULL; /* FIFO of the reader's credits */
static Long clo_shm_slots = 0;
static UChar* shm_base = NULL;
static Int credit_fd = -1;
static Int shm_next = 0, shm_in_flight = 0;

static Int out_fd = -1;
static volatile UInt recording = 0; /* read by the IR guard of every helper call */
static Bool detached = False;        /* a forked child: records nothing (pc_atfork_child) */
/* Code is instrumented only from the first recorded region on (from the start with --all): before it,
   translations are left as they are, so a program's set-up (a Python interpreter importing modules,
   allocating and filling inputs) runs about as fast as under --tool=none. When the first region starts,
   every translation is discarded, and code is translated again, instrumented, as it next runs; the client
   request ends its superblock, so the region's first instruction is already in an instrumented one. */
static Bool instrumenting = False;
static Int nest = 0;                 /* region markers nested inside the recorded one */
static HChar cur_region[256];
static Long cur_tid = -1;
static ULong cur_instrs, cur_loads, cur_stores, cur_branches, cur_dropped;
static ULong total_instrs; /* guest instructions executed in recorded regions, all regions */

#define BUF_RECS 43690 /* about 2 MiB */
/* the record buffer, column by column (the order of the wire format, see flush_records), each column
   BUF_RECS long: a static block, or with --shm the ring slot being filled */
#define COL_BYTES (8 + 8 + 4 * 6 + 1 + 1)
static ULong cbuf_static[(BUF_RECS * COL_BYTES + 7) / 8];
static UChar* cb = (UChar*)cbuf_static;
#define C_ADDR(b) ((Long*)(b))
#define C_TID(b) ((Long*)((b) + 8 * BUF_RECS))
#define C_PC(b) ((Int*)((b) + 16 * BUF_RECS))
#define C_S1(b) ((Int*)((b) + 20 * BUF_RECS))
#define C_S2(b) ((Int*)((b) + 24 * BUF_RECS))
#define C_S3(b) ((Int*)((b) + 28 * BUF_RECS))
#define C_DST(b) ((Int*)((b) + 32 * BUF_RECS))
#define C_SIZE(b) ((Int*)((b) + 36 * BUF_RECS))
#define C_OP(b) ((UChar*)((b) + 40 * BUF_RECS))
#define C_TAKEN(b) ((UChar*)((b) + 41 * BUF_RECS))
static Int nbuf = 0;

static Int cur_tok[N_LOCS]; /* the running thread's location tokens (see pc_start_client_code) */
static Int rt_zero = 0;   /* token 0: no source / no destination */
static Int rt_temp[8];    /* TEMP_TOKEN + i: load results inside an instruction */
static Int rt_dst;        /* the executing instruction's destination token (0: it writes no location) */
static Int rt_compute;    /* its compute result: rt_dst, or TEMP_TOKEN + 4 when it writes no location */
static UShort loc_version[N_LOCS];
static Int sb_tok[MAX_SB_INSTRS];
static ULong pending[MAX_ACC];
static Int npending = 0;

/* Threads. Valgrind runs one thread at a time and switches only between superblocks. Each thread has its
   own registers, so the tokens of the locations (cur_tok) and the logical thread (cur_tid) are per thread:
   swapped in and out when another thread starts running client code. Tokens written by Valgrind thread t
   >= 2 are offset by 65536 * t (thread 1, the main thread, has none, and 65536..131071 holds the
   temporaries), so no token of one thread is ever a token of another, and a thread's reads depend only on
   its own writes. Memory is shared: dependences through memory cross threads, as they do in the program. */
typedef struct { Int tok[N_LOCS]; Long tid; } ThreadRegs;
static ThreadRegs* thr = NULL; /* VG_N_THREADS entries, by Valgrind ThreadId */
static ThreadId running = 1;    /* the thread whose tokens and logical thread are in cur_tok, cur_tid */
static Int tok_base = 0;        /* its token offset */

static void pc_start_client_code(ThreadId t, ULong blocks_dispatched)
{
   if (t == running || t >= VG_N_THREADS) return;
   VG_(memcpy)(thr[running].tok, cur_tok, sizeof cur_tok);
   thr[running].tid = cur_tid;
   VG_(memcpy)(cur_tok, thr[t].tok, sizeof cur_tok);
   cur_tid = thr[t].tid;
   running = t;
   tok_base = t >= 2 ? 65536 * (Int)t : 0;
}

/* a new thread starts with no register dependences and outside the parallel loop */
static void pc_thread_created(ThreadId parent, ThreadId child)
{
   if (child >= VG_N_THREADS) return;
   VG_(memset)(thr[child].tok, 0, sizeof thr[child].tok);
   thr[child].tid = -1;
}

static void write_all(const void* p, Int n)
{
   const UChar* c = p;
   while (n > 0) {
      Int w = VG_(write)(out_fd, c, n);
      if (w <= 0) {
         VG_(umsg)("portcast: writing the trace failed (reader gone?); stopping\n");
         VG_(exit)(3);
      }
      c += w;
      n -= w;
   }
}

static void send_msg(UInt type, const void* payload, UInt len)
{
   UInt hdr[2];
   hdr[0] = type;
   hdr[1] = len;
   if (out_fd < 0) return;
   write_all(hdr, sizeof hdr);
   if (len) write_all(payload, len);
}

/* records leave column by column (addr, tid, pc, src1, src2, src3, dst, size, op, taken), so that the reader
   copies contiguous arrays */

/* one RECORDS message: the header, then the first nbuf values of each column (no copy into a staging
   buffer; the bytes on the wire are the same) */
static void flush_records(void)
{
   Int n = nbuf;
   UInt hdr[2];
   if (n == 0) return;
   nbuf = 0;
   if (out_fd < 0) return;
   hdr[0] = MSG_RECORDS;
   hdr[1] = (UInt)(n * COL_BYTES);
   if (shm_base) { /* the records are in the slot already: hand it over, then take the next one */
      UInt msg[3];
      msg[0] = (UInt)shm_next;
      msg[1] = (UInt)n;
      msg[2] = BUF_RECS;
      send_msg(MSG_RECORDS_SHM, msg, sizeof msg);
      shm_next = (shm_next + 1) % (Int)clo_shm_slots;
      shm_in_flight++;
      while (shm_in_flight >= clo_shm_slots) { /* wait until the reader is done with the oldest slot */
         UChar cr[64];
         Int r = VG_(read)(credit_fd, cr, sizeof cr);
         if (r <= 0) {
            VG_(umsg)("portcast: reading the reader's credits failed (reader gone?); stopping\n");
            VG_(exit)(3);
         }
         shm_in_flight -= r;
      }
      cb = shm_base + (SizeT)shm_next * SHM_SLOT_BYTES;
      return;
   }
   write_all(hdr, sizeof hdr);
   write_all(C_ADDR(cb), n * 8); write_all(C_TID(cb), n * 8);
   write_all(C_PC(cb), n * 4); write_all(C_S1(cb), n * 4); write_all(C_S2(cb), n * 4); write_all(C_S3(cb), n * 4);
   write_all(C_DST(cb), n * 4); write_all(C_SIZE(cb), n * 4);
   write_all(C_OP(cb), n); write_all(C_TAKEN(cb), n);
}

/* called once per executed guest instruction (while recording), at its end or before a taken exit.
   a0/a1: addresses of the first two memory accesses; more are in pending[]; packed: taken | nacc << 8 */
static VG_REGPARM(0) void pc_instr(InstrDesc* d, ULong a0, ULong a1, ULong packed)
{
   Int i, k, j, nacc = (Int)((packed >> 8) & 0xff), n_uops = d->n_uops;
   UChar taken = (UChar)(packed & 1);
   Int dst_tok = 0, emitted = 0;
   ULong addr[MAX_ACC];
   const Long tid = cur_tid;
   UChar* b = cb; /* the column block (flush_records may move it) */
   addr[0] = a0;
   addr[1] = a1;
   for (i = 2; i < MAX_ACC; i++) addr[i] = i - 2 < npending ? pending[i - 2] : 0;
   npending = 0;
   if (d->n_wlocs) {
      UShort p = d->wlocs[0];
      UShort v = (UShort)((loc_version[p] + 1) & 0xff);
      loc_version[p] = v;
      dst_tok = p + 256 * (Int)v + tok_base;
   }
   rt_dst = dst_tok;
   rt_compute = dst_tok ? dst_tok : TEMP_TOKEN + 4;
   /* records are written straight into the column buffer; their sources are resolved before this
      instruction's destination is written (below), exactly as reads precede the write */
   for (k = 0; k < n_uops; k++) {
      const UOp* u = &d->uop[k];
      const UChar op = u->op;
      if (op == OP_LOAD || op == OP_STORE) {
         if (u->acc >= nacc) continue;
         if (nbuf == BUF_RECS) { flush_records(); b = cb; }
         j = nbuf++;
         C_ADDR(b)[j] = (Long)addr[u->acc];
         C_SIZE(b)[j] = u->size;
         if (op == OP_LOAD) cur_loads++; else cur_stores++;
         C_TAKEN(b)[j] = 0;
      } else {
         if (nbuf == BUF_RECS) { flush_records(); b = cb; }
         j = nbuf++;
         C_ADDR(b)[j] = 0;
         C_SIZE(b)[j] = 0;
         if (op == OP_BRANCH) { cur_branches++; C_TAKEN(b)[j] = taken; } else C_TAKEN(b)[j] = 0;
      }
      C_PC(b)[j] = u->pc;
      C_OP(b)[j] = op;
      /* source and destination tokens, read through the pointers bind_uop() set at translation time */
      C_S1(b)[j] = *u->sp[0];
      C_S2(b)[j] = *u->sp[1];
      C_S3(b)[j] = *u->sp[2];
      C_DST(b)[j] = *u->dp;
      C_TID(b)[j] = tid;
      emitted++;
   }
   for (i = 0; i < d->n_wlocs; i++) cur_tok[d->wlocs[i]] = dst_tok;
   sb_tok[d->sb_index] = dst_tok;
   cur_instrs++;
   cur_dropped += d->dropped;
   if (!emitted) { /* an instruction left before its memory accesses (e.g. rep with count 0) */
      if (nbuf == BUF_RECS) { flush_records(); b = cb; }
      j = nbuf++;
      C_ADDR(b)[j] = 0; C_TID(b)[j] = tid; C_PC(b)[j] = d->base + SLOT_COMPUTE;
      C_S1(b)[j] = C_S2(b)[j] = C_S3(b)[j] = 0; C_DST(b)[j] = dst_tok; C_SIZE(b)[j] = 0;
      C_OP(b)[j] = d->fallback_op; C_TAKEN(b)[j] = 0;
   }
}

static VG_REGPARM(0) void pc_note_mem(ULong a)
{
   if (npending < MAX_ACC) pending[npending++] = a;
}

/* ------------------------------------------------------------------ static ids */
typedef struct { Addr addr; Int base; } PcEntry;
static PcEntry* pc_table = NULL;
static UWord pc_cap = 0, pc_used = 0;
static Int next_instr = 0;

static Int* lookup_base(Addr a, Bool* fresh)
{
   UWord h, i;
   if (pc_used * 2 >= pc_cap) {
      UWord old_cap = pc_cap, j;
      PcEntry* old = pc_table;
      pc_cap = pc_cap ? pc_cap * 2 : 1 << 14;
      pc_table = VG_(calloc)("portcast.pctable", pc_cap, sizeof(PcEntry));
      for (j = 0; j < old_cap; j++)
         if (old[j].base) {
            h = (old[j].addr * 0x9E3779B97F4A7C15ULL) >> 20;
            for (i = h & (pc_cap - 1); pc_table[i].base; i = (i + 1) & (pc_cap - 1)) {}
            pc_table[i] = old[j];
         }
      if (old) VG_(free)(old);
   }
   h = (a * 0x9E3779B97F4A7C15ULL) >> 20;
   for (i = h & (pc_cap - 1); pc_table[i].base; i = (i + 1) & (pc_cap - 1))
      if (pc_table[i].addr == a) { *fresh = False; return &pc_table[i].base; }
   pc_table[i].addr = a;
   pc_table[i].base = 1 + N_SLOTS * next_instr++;
   pc_used++;
   *fresh = True;
   return &pc_table[i].base;
}

/* which slots of an instruction have been announced in the static table (bit per slot) */
static UChar* slot_seen = NULL;
static Int slot_seen_cap = 0;

static void announce_static(Addr a, Int pc, const HChar* kind)
{
   Int idx = (pc - 1) / N_SLOTS, slot = (pc - 1) % N_SLOTS;
   HChar line[1024];
   const HChar *fn = "", *file = "", *dir = "";
   UInt lineno = 0;
   Int n;
   DiEpoch ep = VG_(current_DiEpoch)();
   if (idx >= slot_seen_cap) {
      Int nc = slot_seen_cap ? slot_seen_cap * 2 : 1 << 14;
      while (nc <= idx) nc *= 2;
      slot_seen = VG_(realloc)("portcast.slots", slot_seen, nc);
      VG_(memset)(slot_seen + slot_seen_cap, 0, nc - slot_seen_cap);
      slot_seen_cap = nc;
   }
   if (slot_seen[idx] & (1 << slot)) return;
   slot_seen[idx] |= (UChar)(1 << slot);
   if (!VG_(get_fnname)(ep, a, &fn)) fn = "";
   {
      HChar fnbuf[256];
      VG_(strncpy)(fnbuf, fn, sizeof fnbuf - 1);
      fnbuf[sizeof fnbuf - 1] = 0;
      if (!VG_(get_filename_linenum)(ep, a, &file, &dir, &lineno)) { file = ""; dir = ""; lineno = 0; }
      n = VG_(snprintf)(line, sizeof line, "%d\t%lu\t%s\t%s\t%s%s%s\t%u", pc, (unsigned long)a, kind, fnbuf,
                        dir, (dir[0] && file[0]) ? "/" : "", file, lineno);
   }
   send_msg(MSG_STATIC, line, n);
}

/* ------------------------------------------------------------------ op classification */
/* the strongest class on a value's path names the instruction's compute record: special > division >
   multiply > add-like, double precision above single within each */
static Int op_rank(UChar op)
{
   switch (op) {
   case OP_FP64_SPECIAL: return 11;
   case OP_FP_SPECIAL: return 10;
   case OP_FP64_DIV: return 9;
   case OP_FP_DIV: return 8;
   case OP_INT_DIV: return 7;
   case OP_FP64_MUL: return 6;
   case OP_FP_MUL: return 5;
   case OP_INT_MUL: return 4;
   case OP_FP64_ALU: return 3;
   case OP_FP_ALU: return 2;
   case OP_INT_ALU: return 1;
   default: return 0;
   }
}

static Bool is_float_type(IRType t)
{
   return t == Ity_F16 || t == Ity_F32 || t == Ity_F64 || t == Ity_F128 || t == Ity_D32 || t == Ity_D64 ||
          t == Ity_D128;
}

/* 64-bit (or wider) floating-point values: the operations on them are double precision */
static Bool is_double_type(IRType t)
{
   return t == Ity_F64 || t == Ity_F128 || t == Ity_D64 || t == Ity_D128;
}

/* whether a floating-point IR operation computes in double precision: a scalar operation with an F64 (or
   wider) result or operand, conversions to and from doubles included; a vector one on 64-bit lanes (the
   64Fx2, 64F0x2 and 64Fx4 operations, whose operand types are only V128 / V256) */
static Bool is_double_op(IROp op)
{
   IRType td, t1, t2, t3, t4;
   switch (op) {
   case Iop_Mul64Fx2: case Iop_Mul64F0x2: case Iop_Mul64Fx4: case Iop_Div64Fx2: case Iop_Div64F0x2:
   case Iop_Div64Fx4: case Iop_Sqrt64F0x2: case Iop_Sqrt64Fx2: case Iop_Sqrt64Fx4: case Iop_Add64Fx2:
   case Iop_Sub64Fx2: case Iop_Min64Fx2: case Iop_Max64Fx2: case Iop_Add64F0x2: case Iop_Sub64F0x2:
   case Iop_Min64F0x2: case Iop_Max64F0x2: case Iop_Add64Fx4: case Iop_Sub64Fx4: case Iop_Min64Fx4:
   case Iop_Max64Fx4: case Iop_CmpEQ64Fx2: case Iop_CmpLT64Fx2: case Iop_CmpLE64Fx2: case Iop_CmpUN64Fx2:
   case Iop_CmpEQ64F0x2: case Iop_CmpLT64F0x2: case Iop_CmpLE64F0x2: case Iop_CmpUN64F0x2:
      return True;
   default:
      break;
   }
   typeOfPrimop(op, &td, &t1, &t2, &t3, &t4);
   return is_double_type(td) || is_double_type(t1) || is_double_type(t2) || is_double_type(t3) ||
          is_double_type(t4);
}

static Int classify_op_class(IROp op);

/* class of one IR operation (double-precision floating point as FP64_*); -1 for free width conversions and
   re-interpretations. VEX models some single-precision instructions (ucomiss, cvttss2si) as the double
   operation of operands widened by F32toF64: with `widened` (every F64 operand is such a widening, see
   widened_args) the operation is single precision, and so is the widening itself. */
static Int classify_op(IROp op, Bool widened)
{
   Int c = classify_op_class(op);
   if (c >= OP_FP_ALU && c <= OP_FP_SPECIAL && op != Iop_F32toF64 && !widened && is_double_op(op))
      return c + FP64_OFFSET;
   return c;
}

/* class of one IR operation, floating point as FP_* of either precision (classify_op tells them apart);
   -1 for free width conversions and re-interpretations */
static Int classify_op_class(IROp op)
{
   IRType td, t1, t2, t3, t4;
   switch (op) {
   case Iop_8Uto16: case Iop_8Uto32: case Iop_8Uto64: case Iop_16Uto32: case Iop_16Uto64: case Iop_32Uto64:
   case Iop_8Sto16: case Iop_8Sto32: case Iop_8Sto64: case Iop_16Sto32: case Iop_16Sto64: case Iop_32Sto64:
   case Iop_64to8: case Iop_32to8: case Iop_64to16: case Iop_32to16: case Iop_16to8: case Iop_64to32:
   case Iop_128to64: case Iop_128HIto64: case Iop_64HLto128: case Iop_64HIto32: case Iop_32HLto64:
   case Iop_V128to64: case Iop_V128HIto64: case Iop_64HLtoV128: case Iop_64UtoV128: case Iop_32UtoV128:
   case Iop_SetV128lo64: case Iop_SetV128lo32: case Iop_V128to32: case Iop_V256toV128_0:
   case Iop_V256toV128_1: case Iop_V128HLtoV256: case Iop_ReinterpF64asI64: case Iop_ReinterpI64asF64:
   case Iop_ReinterpF32asI32: case Iop_ReinterpI32asF32:
      return -1;
   case Iop_Mul8: case Iop_Mul16: case Iop_Mul32: case Iop_Mul64: case Iop_MullS8: case Iop_MullS16:
   case Iop_MullS32: case Iop_MullS64: case Iop_MullU8: case Iop_MullU16: case Iop_MullU32: case Iop_MullU64:
      return OP_INT_MUL;
   case Iop_DivModU64to32: case Iop_DivModS64to32: case Iop_DivModU128to64: case Iop_DivModS128to64:
   case Iop_DivU32: case Iop_DivS32: case Iop_DivU64: case Iop_DivS64:
      return OP_INT_DIV;
   case Iop_MulF64: case Iop_MulF32: case Iop_Mul32Fx4: case Iop_Mul32F0x4: case Iop_Mul64Fx2:
   case Iop_Mul64F0x2: case Iop_Mul64Fx4: case Iop_Mul32Fx8: case Iop_MAddF64: case Iop_MAddF32:
   case Iop_MSubF64: case Iop_MSubF32:
      return OP_FP_MUL;
   case Iop_DivF64: case Iop_DivF32: case Iop_Div32Fx4: case Iop_Div32F0x4: case Iop_Div64Fx2:
   case Iop_Div64F0x2: case Iop_Div64Fx4: case Iop_Div32Fx8:
      return OP_FP_DIV;
   case Iop_SqrtF64: case Iop_SqrtF32: case Iop_Sqrt32F0x4: case Iop_Sqrt64F0x2: case Iop_Sqrt32Fx4:
   case Iop_Sqrt64Fx2: case Iop_Sqrt64Fx4: case Iop_Sqrt32Fx8: case Iop_SinF64: case Iop_CosF64:
   case Iop_TanF64: case Iop_AtanF64: case Iop_Yl2xF64: case Iop_Yl2xp1F64: case Iop_2xm1F64:
   case Iop_PRemF64: case Iop_PRem1F64: case Iop_ScaleF64: case Iop_RSqrtEst32Fx4: case Iop_RecipEst32Fx4:
   case Iop_RSqrtEst32F0x4: case Iop_RecipEst32F0x4:
      return OP_FP_SPECIAL;
   case Iop_Add32Fx4: case Iop_Sub32Fx4: case Iop_Min32Fx4: case Iop_Max32Fx4: case Iop_Add32F0x4:
   case Iop_Sub32F0x4: case Iop_Min32F0x4: case Iop_Max32F0x4: case Iop_Add64Fx2: case Iop_Sub64Fx2:
   case Iop_Min64Fx2: case Iop_Max64Fx2: case Iop_Add64F0x2: case Iop_Sub64F0x2: case Iop_Min64F0x2:
   case Iop_Max64F0x2: case Iop_Add64Fx4: case Iop_Sub64Fx4: case Iop_Min64Fx4: case Iop_Max64Fx4:
   case Iop_Add32Fx8: case Iop_Sub32Fx8: case Iop_Min32Fx8: case Iop_Max32Fx8: case Iop_CmpEQ32Fx4:
   case Iop_CmpLT32Fx4: case Iop_CmpLE32Fx4: case Iop_CmpUN32Fx4: case Iop_CmpEQ32F0x4: case Iop_CmpLT32F0x4:
   case Iop_CmpLE32F0x4: case Iop_CmpUN32F0x4: case Iop_CmpEQ64Fx2: case Iop_CmpLT64Fx2: case Iop_CmpLE64Fx2:
   case Iop_CmpUN64Fx2: case Iop_CmpEQ64F0x2: case Iop_CmpLT64F0x2: case Iop_CmpLE64F0x2: case Iop_CmpUN64F0x2:
      return OP_FP_ALU;
   default:
      break;
   }
   typeOfPrimop(op, &td, &t1, &t2, &t3, &t4);
   if (is_float_type(td) || is_float_type(t1) || is_float_type(t2) || is_float_type(t3) || is_float_type(t4))
      return OP_FP_ALU;
   return OP_INT_ALU;
}

/* ------------------------------------------------------------------ instrumentation: analysis */
typedef struct { UChar kind; UShort val; } ItemKey;
static ItemKey items[MAX_ITEMS];
static Int n_items;
static ULong* tmask = NULL;  /* per IR temporary: bit set of items its value derives from */
static UChar* tcomp = NULL;  /* per IR temporary: value computed by an operation (not a plain copy) */
static Int* tcls = NULL;     /* per IR temporary: strongest op class on its value's path, -1 none */
static UChar* twide = NULL;  /* per IR temporary: its value is an F32toF64 widening of a single */
static Int* tinstr = NULL;   /* per IR temporary: instruction (index in SB) that defined it */
static Int* tdef = NULL;     /* per IR temporary: defining instruction, from the pre-scan */
static UChar* tlater = NULL; /* per IR temporary: read by a later instruction of the superblock */
static Bool has_later_value;
static Int* tloc = NULL;     /* per IR temporary: guest location it is a plain copy of (GET), or -1 */
static Int loc_last_writer[N_LOCS]; /* during analysis: last instruction of the SB writing each location */
static Int tcap = 0;
static IRTypeEnv* cur_tyenv;
static Int cur_instr_index;
static Int cur_stmt;

static Int item_bit(UChar kind, UShort val)
{
   Int i;
   for (i = 0; i < n_items; i++)
      if (items[i].kind == kind && items[i].val == val) return i;
   if (n_items == MAX_ITEMS) return -1;
   items[n_items].kind = kind;
   items[n_items].val = val;
   return n_items++;
}

static ULong bit_of(UChar kind, UShort val)
{
   Int b = item_bit(kind, val);
   return b < 0 ? 0 : (1ULL << b);
}

static UShort loc_of(Int offset)
{
   Int l = offset >> 3;
   tl_assert(l >= 0 && l < N_LOCS);
   return (UShort)l;
}

static Bool ignored_loc(Int offset)
{
   return offset == offsetof(VexGuestAMD64State, guest_RIP) ||
          offset == offsetof(VexGuestAMD64State, guest_IP_AT_SYSCALL);
}

typedef struct { ULong mask; Bool computed; Int cls; } Val;

static void merge(Val* a, Val b)
{
   a->mask |= b.mask;
   a->computed = a->computed || b.computed;
   if (b.cls >= 0 && (a->cls < 0 || op_rank((UChar)b.cls) > op_rank((UChar)a->cls))) a->cls = b.cls;
}

static void note_cls(Val* a, Int cls)
{
   if (cls < 0) return;
   a->computed = True;
   if (a->cls < 0 || op_rank((UChar)cls) > op_rank((UChar)a->cls)) a->cls = cls;
}

typedef struct {
   Bool is_load;
   Int size;
   ULong addr_mask;
   ULong data_mask;   /* stores: sources of the stored value */
   Bool data_computed;
   IRExpr* addr;
   Int stmt;
   Int load_index;
} Acc;
static Acc accs[MAX_ACC];
static Int n_accs, n_loads, n_stores;
static Bool too_many_acc;
static Int value_cls;
static ULong value_mask;
static Bool has_dirty;
static UShort wlocs[MAX_WLOCS];
static Int n_wlocs;

static Val eval_expr(IRExpr* e);

static Val val_of_atom(IRExpr* e)
{
   Val v = {0, False, -1};
   if (e == NULL) return v;
   if (e->tag == Iex_RdTmp) {
      IRTemp t = e->Iex.RdTmp.tmp;
      if (tinstr[t] != cur_instr_index) {
         /* defined by an earlier instruction of this superblock: a plain copy of a location that has not
            been written since reads that location; any other value depends on that instruction */
         if (tloc[t] >= 0 && loc_last_writer[tloc[t]] < tinstr[t]) v.mask = bit_of(IT_LOC, (UShort)tloc[t]);
         else if (tinstr[t] >= 0) v.mask = bit_of(IT_PREV, (UShort)tinstr[t]);
         return v;
      }
      v.mask = tmask[t];
      v.computed = tcomp[t];
      v.cls = tcls[t];
      return v;
   }
   if (e->tag == Iex_Const) return v;
   return eval_expr(e);
}

static Int add_access(Bool is_load, Int size, IRExpr* addr)
{
   Val av = val_of_atom(addr);
   if (n_accs == MAX_ACC) { too_many_acc = True; return -1; }
   accs[n_accs].is_load = is_load;
   accs[n_accs].size = size > 0 ? size : 1;
   accs[n_accs].addr_mask = av.mask;
   accs[n_accs].data_mask = 0;
   accs[n_accs].data_computed = False;
   accs[n_accs].addr = addr;
   accs[n_accs].stmt = cur_stmt;
   accs[n_accs].load_index = is_load ? n_loads : -1;
   if (is_load) n_loads++; else n_stores++;
   return n_accs++;
}

/* whether every F64 operand of an operation (at least one) is a temporary holding an F32toF64 widening */
static Bool widened_args(IRExpr* a1, IRExpr* a2, IRExpr* a3, IRExpr* a4)
{
   IRExpr* args[4] = {a1, a2, a3, a4};
   Int i, n64 = 0;
   for (i = 0; i < 4; i++) {
      IRExpr* a = args[i];
      if (a == NULL || typeOfIRExpr(cur_tyenv, a) != Ity_F64) continue;
      if (a->tag != Iex_RdTmp || !twide[a->Iex.RdTmp.tmp]) return False;
      n64++;
   }
   return n64 > 0;
}

static Val eval_expr(IRExpr* e)
{
   Val v = {0, False, -1};
   Int i;
   switch (e->tag) {
   case Iex_Get:
      if (!ignored_loc(e->Iex.Get.offset)) v.mask = bit_of(IT_LOC, loc_of(e->Iex.Get.offset));
      return v;
   case Iex_GetI:
      v.mask = bit_of(IT_LOC, loc_of(e->Iex.GetI.descr->base));
      merge(&v, val_of_atom(e->Iex.GetI.ix));
      return v;
   case Iex_RdTmp: case Iex_Const:
      return val_of_atom(e);
   case Iex_Qop:
      merge(&v, val_of_atom(e->Iex.Qop.details->arg1));
      merge(&v, val_of_atom(e->Iex.Qop.details->arg2));
      merge(&v, val_of_atom(e->Iex.Qop.details->arg3));
      merge(&v, val_of_atom(e->Iex.Qop.details->arg4));
      note_cls(&v, classify_op(e->Iex.Qop.details->op,
                               widened_args(e->Iex.Qop.details->arg1, e->Iex.Qop.details->arg2,
                                            e->Iex.Qop.details->arg3, e->Iex.Qop.details->arg4)));
      return v;
   case Iex_Triop:
      merge(&v, val_of_atom(e->Iex.Triop.details->arg1));
      merge(&v, val_of_atom(e->Iex.Triop.details->arg2));
      merge(&v, val_of_atom(e->Iex.Triop.details->arg3));
      note_cls(&v, classify_op(e->Iex.Triop.details->op,
                               widened_args(e->Iex.Triop.details->arg1, e->Iex.Triop.details->arg2,
                                            e->Iex.Triop.details->arg3, NULL)));
      return v;
   case Iex_Binop:
      merge(&v, val_of_atom(e->Iex.Binop.arg1));
      merge(&v, val_of_atom(e->Iex.Binop.arg2));
      note_cls(&v, classify_op(e->Iex.Binop.op, widened_args(e->Iex.Binop.arg1, e->Iex.Binop.arg2, NULL, NULL)));
      return v;
   case Iex_Unop:
      merge(&v, val_of_atom(e->Iex.Unop.arg));
      note_cls(&v, classify_op(e->Iex.Unop.op, widened_args(e->Iex.Unop.arg, NULL, NULL, NULL)));
      return v;
   case Iex_Load: {
      Int a = add_access(True, sizeofIRType(e->Iex.Load.ty), e->Iex.Load.addr);
      if (a >= 0) v.mask = bit_of(IT_TEMP, (UShort)(accs[a].load_index < 4 ? accs[a].load_index : 3));
      return v;
   }
   case Iex_CCall:
      for (i = 0; e->Iex.CCall.args[i]; i++) merge(&v, val_of_atom(e->Iex.CCall.args[i]));
      note_cls(&v, OP_INT_ALU);
      return v;
   case Iex_ITE:
      merge(&v, val_of_atom(e->Iex.ITE.cond));
      merge(&v, val_of_atom(e->Iex.ITE.iftrue));
      merge(&v, val_of_atom(e->Iex.ITE.iffalse));
      note_cls(&v, OP_INT_ALU);
      return v;
   default:
      return v;
   }
}

static void value_sink(Val v)
{
   value_mask |= v.mask;
   if (v.cls >= 0 && (value_cls < 0 || op_rank((UChar)v.cls) > op_rank((UChar)value_cls))) value_cls = v.cls;
}

static void add_wloc(Int offset)
{
   Int i;
   UShort l;
   if (ignored_loc(offset)) return;
   l = loc_of(offset);
   for (i = 0; i < n_wlocs; i++)
      if (wlocs[i] == l) return;
   if (n_wlocs == MAX_WLOCS) return;
   wlocs[n_wlocs++] = l;
}

static void value_sink(Val v);

static void set_tmp(IRTemp t, Val v)
{
   tloc[t] = -1;
   if (tlater[t] && v.computed) { value_sink(v); has_later_value = True; }
   tmask[t] = v.mask;
   tcomp[t] = v.computed;
   tcls[t] = v.cls;
   tinstr[t] = cur_instr_index;
}

static void analyse_stmt(IRStmt* st)
{
   Val v, w;
   Int a, i;
   switch (st->tag) {
   case Ist_WrTmp: {
      IRExpr* e = st->Ist.WrTmp.data;
      IRTemp t = st->Ist.WrTmp.tmp;
      set_tmp(t, eval_expr(e));
      twide[t] = e->tag == Iex_Unop && e->Iex.Unop.op == Iop_F32toF64;
      if (e->tag == Iex_Get && !ignored_loc(e->Iex.Get.offset)) tloc[t] = loc_of(e->Iex.Get.offset);
      else if (e->tag == Iex_RdTmp && tinstr[e->Iex.RdTmp.tmp] == cur_instr_index) tloc[t] = tloc[e->Iex.RdTmp.tmp];
      if (tlater[t] && tloc[t] < 0 && !tcomp[t]) has_later_value = True; /* e.g. a loaded value */
      break;
   }
   case Ist_Put:
      value_sink(val_of_atom(st->Ist.Put.data));
      add_wloc(st->Ist.Put.offset);
      break;
   case Ist_PutI:
      value_sink(val_of_atom(st->Ist.PutI.details->data));
      add_wloc(st->Ist.PutI.details->descr->base);
      break;
   case Ist_Store:
      v = val_of_atom(st->Ist.Store.data);
      value_sink(v);
      a = add_access(False, sizeofIRType(typeOfIRExpr(cur_tyenv, st->Ist.Store.data)), st->Ist.Store.addr);
      if (a >= 0) { accs[a].data_mask = v.mask; accs[a].data_computed = v.computed; }
      break;
   case Ist_StoreG: {
      IRStoreG* sg = st->Ist.StoreG.details;
      v = val_of_atom(sg->data);
      value_sink(v);
      a = add_access(False, sizeofIRType(typeOfIRExpr(cur_tyenv, sg->data)), sg->addr);
      if (a >= 0) { accs[a].data_mask = v.mask; accs[a].data_computed = v.computed; }
      break;
   }
   case Ist_LoadG: {
      IRLoadG* lg = st->Ist.LoadG.details;
      a = add_access(True, sizeofIRType(typeOfIRTemp(cur_tyenv, lg->dst)), lg->addr);
      v = val_of_atom(lg->alt);
      if (a >= 0) v.mask |= bit_of(IT_TEMP, (UShort)(accs[a].load_index < 4 ? accs[a].load_index : 3));
      set_tmp(lg->dst, v);
      break;
   }
   case Ist_CAS: {
      IRCAS* c = st->Ist.CAS.details;
      Int sz = sizeofIRType(typeOfIRExpr(cur_tyenv, c->dataLo)) * (c->dataHi ? 2 : 1);
      a = add_access(True, sz, c->addr);
      v.mask = a >= 0 ? bit_of(IT_TEMP, (UShort)(accs[a].load_index < 4 ? accs[a].load_index : 3)) : 0;
      v.computed = False;
      v.cls = -1;
      set_tmp(c->oldLo, v);
      if (c->oldHi != IRTemp_INVALID) set_tmp(c->oldHi, v);
      w = val_of_atom(c->dataLo);
      merge(&w, val_of_atom(c->expdLo));
      merge(&w, v);
      note_cls(&w, OP_INT_ALU);
      value_sink(w);
      a = add_access(False, sz, c->addr);
      if (a >= 0) { accs[a].data_mask = w.mask; accs[a].data_computed = True; }
      break;
   }
   case Ist_Dirty: {
      IRDirty* d = st->Ist.Dirty.details;
      Val dv = {0, True, -1};
      has_dirty = True;
      for (i = 0; d->args[i]; i++)
         if (!is_IRExpr_VECRET_or_GSPTR(d->args[i])) merge(&dv, val_of_atom(d->args[i]));
      for (i = 0; i < d->nFxState; i++) {
         Int off = d->fxState[i].offset, k;
         for (k = 0; k <= d->fxState[i].nRepeats; k++) {
            Int o = off + k * d->fxState[i].repeatLen;
            if (d->fxState[i].fx == Ifx_Read || d->fxState[i].fx == Ifx_Modify) {
               if (!ignored_loc(o)) dv.mask |= bit_of(IT_LOC, loc_of(o));
            }
            if (d->fxState[i].fx == Ifx_Write || d->fxState[i].fx == Ifx_Modify) add_wloc(o);
         }
      }
      if (d->mFx == Ifx_Read || d->mFx == Ifx_Modify) {
         a = add_access(True, d->mSize, d->mAddr);
         if (a >= 0) dv.mask |= bit_of(IT_TEMP, (UShort)(accs[a].load_index < 4 ? accs[a].load_index : 3));
      }
      if (d->mFx == Ifx_Write || d->mFx == Ifx_Modify) {
         a = add_access(False, d->mSize, d->mAddr);
         if (a >= 0) { accs[a].data_mask = dv.mask; accs[a].data_computed = True; }
      }
      if (d->tmp != IRTemp_INVALID) set_tmp(d->tmp, dv);
      value_sink(dv);
      break;
   }
   case Ist_Exit:
      value_sink(val_of_atom(st->Ist.Exit.guard));
      break;
   default:
      break;
   }
}

/* ------------------------------------------------------------------ instrumentation: building descriptors */
typedef struct {
   Int first, end; /* statements [first, end); first is the IMark */
   Addr addr;
   Int len;
   InstrDesc* d;
   IRExpr* acc_addr[MAX_ACC];
   Int acc_stmt[MAX_ACC];
   Int n_acc;
   Bool is_cond;
} IInfo;
static IInfo iinfo[MAX_SB_INSTRS];

static const HChar* op_name(UChar op)
{
   static const HChar* names[] = {"INT_ALU", "INT_MUL", "INT_DIV", "INT_REM", "FP_ALU", "FP_MUL", "FP_DIV",
                                  "FP_SPECIAL", "LOAD", "STORE", "BRANCH", "JUMP", "CALL", "RET", "MOVE",
                                  "OTHER", "FP64_ALU", "FP64_MUL", "FP64_DIV", "FP64_SPECIAL"};
   return op < N_OP_CLASSES ? names[op] : "?";
}

/* add sources from an item mask; loads' temporaries first. Returns the number dropped. */
static Int add_srcs(UOp* u, ULong mask, Bool compute_src)
{
   Int pass, b, dropped = 0;
   if (compute_src) {
      if (u->nsrc < 3) { u->src[u->nsrc].kind = IT_COMPUTE; u->src[u->nsrc].val = 0; u->nsrc++; }
      else dropped++;
   }
   for (pass = 0; pass < 2; pass++)
      for (b = 0; b < n_items; b++) {
         Item it;
         Int j;
         Bool dup = False;
         if (!(mask & (1ULL << b))) continue;
         if ((pass == 0) != (items[b].kind == IT_TEMP)) continue;
         it.kind = items[b].kind;
         it.val = items[b].val;
         for (j = 0; j < u->nsrc; j++)
            if (u->src[j].kind == it.kind && u->src[j].val == it.val) dup = True;
         if (dup) continue;
         if (u->nsrc < 3) u->src[u->nsrc++] = it;
         else dropped++;
      }
   return dropped;
}

/* where an item's token is when the instruction executes: a location's current token (IT_LOC), the token
   of an earlier instruction of the superblock (IT_PREV), a load result TEMP_TOKEN + i (IT_TEMP), the
   instruction's compute result (IT_COMPUTE: its destination, or TEMP_TOKEN + 4 when it writes no
   location), or token 0 */
static const Int* item_ptr(const Item* it)
{
   switch (it->kind) {
   case IT_LOC: return &cur_tok[it->val];
   case IT_PREV: return &sb_tok[it->val];
   case IT_TEMP: tl_assert(it->val < 8); return &rt_temp[it->val];
   case IT_COMPUTE: return &rt_compute;
   default: return &rt_zero;
   }
}

static void bind_uop(UOp* u)
{
   Int i;
   /* unused source items are IT_NONE (descriptors are zero-allocated, sources appended): token 0 */
   for (i = 0; i < 3; i++) u->sp[i] = item_ptr(&u->src[i]);
   if (u->dmode == D_INSTR) u->dp = &rt_dst;
   else if (u->dmode == D_TEMP) { tl_assert(u->dval < 8); u->dp = &rt_temp[u->dval]; }
   else if (u->dmode == D_COMPUTE) u->dp = &rt_compute;
   else u->dp = &rt_zero;
}

static InstrDesc* build_desc(IInfo* ii, Int sb_index, IRSB* bb, Addr cont_addr, Bool last)
{
   InstrDesc* d = VG_(calloc)("portcast.desc", 1, sizeof(InstrDesc));
   Int i, k, n_exits = 0, dropped = 0;
   Addr exit_target = 0;
   Bool fresh;
   Int ctrl = -1, compute_op = -1;
   Bool self_loop;
   Int base = *lookup_base(ii->addr, &fresh);
   Bool writes_cc_op = False;
   IRStmt* st;

   n_items = 0;
   n_accs = n_loads = n_stores = 0;
   too_many_acc = False;
   value_cls = -1;
   value_mask = 0;
   has_dirty = False;
   has_later_value = False;
   n_wlocs = 0;
   cur_instr_index = sb_index;
   for (i = ii->first + 1; i < ii->end; i++) {
      st = bb->stmts[i];
      cur_stmt = i;
      analyse_stmt(st);
      if (st->tag == Ist_Exit && st->Ist.Exit.jk == Ijk_Boring) {
         n_exits++;
         exit_target = (Addr)(st->Ist.Exit.dst->tag == Ico_U64 ? st->Ist.Exit.dst->Ico.U64 : 0);
      }
   }
   if (has_later_value && n_wlocs == 0) wlocs[n_wlocs++] = LOC_SB_VALUE;
   for (i = 0; i < n_wlocs; i++)
      if (wlocs[i] == (offsetof(VexGuestAMD64State, guest_CC_OP) >> 3)) writes_cc_op = True;
   self_loop = (n_exits > 0 && exit_target == ii->addr) || cont_addr == ii->addr;
   ii->is_cond = n_exits == 1 && !self_loop;
   if (ii->is_cond) ctrl = OP_BRANCH;
   else if (last) {
      switch (bb->jumpkind) {
      case Ijk_Call: ctrl = OP_CALL; break;
      case Ijk_Ret: ctrl = OP_RET; break;
      case Ijk_Boring:
         if (cont_addr != ii->addr + ii->len && !self_loop) ctrl = OP_JUMP;
         break;
      case Ijk_Sys_syscall: case Ijk_Sys_int32: case Ijk_Sys_int128: case Ijk_Sys_int129: case Ijk_Sys_int130:
      case Ijk_Sys_int145: case Ijk_Sys_int210: case Ijk_Sys_sysenter: case Ijk_ClientReq:
         ctrl = OP_OTHER;
         break;
      default:
         break;
      }
   }
   if (ctrl >= 0) compute_op = ctrl;
   else if (value_cls >= 0) compute_op = value_cls;
   else if (writes_cc_op) compute_op = OP_INT_ALU; /* compare/test: the flags thunk is set, the op is lazy */
   else if (has_dirty) compute_op = OP_OTHER;
   else if (n_accs == 0) compute_op = OP_MOVE;

   d->base = base;
   d->sb_index = (UShort)sb_index;
   d->n_acc = (UChar)n_accs;
   d->is_cond = ii->is_cond;
   d->n_wlocs = (UChar)n_wlocs;
   for (i = 0; i < n_wlocs; i++) d->wlocs[i] = wlocs[i];
   d->fallback_op = compute_op >= 0 ? (UChar)compute_op : OP_OTHER;
   k = 0;
   for (i = 0; i < n_accs; i++) {
      UOp* u;
      if (!accs[i].is_load) continue;
      u = &d->uop[k++];
      u->pc = base + (accs[i].load_index < 4 ? accs[i].load_index : 3);
      u->op = OP_LOAD;
      u->size = accs[i].size;
      u->acc = (UChar)i;
      dropped += add_srcs(u, accs[i].addr_mask, False);
      if (compute_op >= 0) { u->dmode = D_TEMP; u->dval = (UChar)(accs[i].load_index < 4 ? accs[i].load_index : 3); }
      else u->dmode = n_wlocs ? D_INSTR : D_NONE;
   }
   if (compute_op >= 0) {
      UOp* u = &d->uop[k++];
      u->pc = base + SLOT_COMPUTE;
      u->op = (UChar)compute_op;
      dropped += add_srcs(u, value_mask, False);
      u->dmode = (n_wlocs || n_stores) ? D_COMPUTE : D_NONE;
   }
   {
      Int sj = 0;
      for (i = 0; i < n_accs; i++) {
         UOp* u;
         Bool via_compute;
         if (accs[i].is_load) continue;
         u = &d->uop[k++];
         u->pc = base + SLOT_STORE0 + (sj < 2 ? sj : 1);
         sj++;
         u->op = OP_STORE;
         u->size = accs[i].size;
         u->acc = (UChar)i;
         via_compute = compute_op >= 0 && accs[i].data_computed;
         dropped += add_srcs(u, accs[i].addr_mask | (via_compute ? 0 : accs[i].data_mask), via_compute);
         u->dmode = D_NONE;
      }
   }
   d->n_uops = (UChar)k;
   for (i = 0; i < k; i++) bind_uop(&d->uop[i]);
   for (i = 0; i < n_wlocs; i++) loc_last_writer[wlocs[i]] = sb_index;
   d->dropped = (UChar)(dropped > 255 ? 255 : dropped);
   ii->n_acc = n_accs;
   for (i = 0; i < n_accs; i++) {
      ii->acc_addr[i] = accs[i].addr;
      ii->acc_stmt[i] = accs[i].stmt;
   }
   for (i = 0; i < k; i++) {
      UOp* u = &d->uop[i];
      announce_static(ii->addr, u->pc, u->op == OP_LOAD ? "load" : u->op == OP_STORE ? "store" : op_name(u->op));
   }
   if (compute_op < 0) announce_static(ii->addr, base + SLOT_COMPUTE, "OTHER"); /* fallback record */
   return d;
}

/* ------------------------------------------------------------------ instrumentation: IR rewriting */
static IRExpr* mk_guard(IRSB* sb, IRTemp recw, IRExpr* g)
{
   IRTemp t1, t2, t3;
   if (g == NULL) {
      t3 = newIRTemp(sb->tyenv, Ity_I1);
      addStmtToIRSB(sb, IRStmt_WrTmp(t3, IRExpr_Binop(Iop_CmpNE32, IRExpr_RdTmp(recw), IRExpr_Const(IRConst_U32(0)))));
      return IRExpr_RdTmp(t3);
   }
   t1 = newIRTemp(sb->tyenv, Ity_I32);
   t2 = newIRTemp(sb->tyenv, Ity_I32);
   t3 = newIRTemp(sb->tyenv, Ity_I1);
   addStmtToIRSB(sb, IRStmt_WrTmp(t1, IRExpr_Unop(Iop_1Uto32, g)));
   addStmtToIRSB(sb, IRStmt_WrTmp(t2, IRExpr_Binop(Iop_And32, IRExpr_RdTmp(t1), IRExpr_RdTmp(recw))));
   addStmtToIRSB(sb, IRStmt_WrTmp(t3, IRExpr_Binop(Iop_CmpNE32, IRExpr_RdTmp(t2), IRExpr_Const(IRConst_U32(0)))));
   return IRExpr_RdTmp(t3);
}

static IRExpr* addr_arg(IInfo* ii, Int i, Int nacc)
{
   if (i < ii->n_acc && i < nacc) return ii->acc_addr[i];
   return mkIRExpr_HWord(0);
}

static void add_instr_call(IRSB* sb, IRTemp recw, IInfo* ii, Int nacc, UChar taken, IRExpr* exit_guard)
{
   IRExpr* g = mk_guard(sb, recw, exit_guard);
   IRDirty* di = unsafeIRDirty_0_N(
      0, "pc_instr", VG_(fnptr_to_fnentry)(&pc_instr),
      mkIRExprVec_4(mkIRExpr_HWord((HWord)ii->d), addr_arg(ii, 0, nacc), addr_arg(ii, 1, nacc),
                    mkIRExpr_HWord((HWord)(taken | (nacc << 8)))));
   di->guard = g;
   addStmtToIRSB(sb, IRStmt_Dirty(di));
}

static void add_note_call(IRSB* sb, IRTemp recw, IRExpr* addr)
{
   IRDirty* di = unsafeIRDirty_0_N(0, "pc_note_mem", VG_(fnptr_to_fnentry)(&pc_note_mem), mkIRExprVec_1(addr));
   di->guard = mk_guard(sb, recw, NULL);
   addStmtToIRSB(sb, IRStmt_Dirty(di));
}

static void scan_use(IRExpr* e, Int instr)
{
   Int i;
   if (e == NULL) return;
   switch (e->tag) {
   case Iex_RdTmp: {
      IRTemp t = e->Iex.RdTmp.tmp;
      if (tdef[t] >= 0 && tdef[t] != instr) tlater[t] = 1;
      return;
   }
   case Iex_GetI: scan_use(e->Iex.GetI.ix, instr); return;
   case Iex_Qop:
      scan_use(e->Iex.Qop.details->arg1, instr); scan_use(e->Iex.Qop.details->arg2, instr);
      scan_use(e->Iex.Qop.details->arg3, instr); scan_use(e->Iex.Qop.details->arg4, instr);
      return;
   case Iex_Triop:
      scan_use(e->Iex.Triop.details->arg1, instr); scan_use(e->Iex.Triop.details->arg2, instr);
      scan_use(e->Iex.Triop.details->arg3, instr);
      return;
   case Iex_Binop: scan_use(e->Iex.Binop.arg1, instr); scan_use(e->Iex.Binop.arg2, instr); return;
   case Iex_Unop: scan_use(e->Iex.Unop.arg, instr); return;
   case Iex_Load: scan_use(e->Iex.Load.addr, instr); return;
   case Iex_CCall: for (i = 0; e->Iex.CCall.args[i]; i++) scan_use(e->Iex.CCall.args[i], instr); return;
   case Iex_ITE:
      scan_use(e->Iex.ITE.cond, instr); scan_use(e->Iex.ITE.iftrue, instr); scan_use(e->Iex.ITE.iffalse, instr);
      return;
   default: return;
   }
}

static void scan_stmt(IRStmt* st, Int instr)
{
   Int i;
   switch (st->tag) {
   case Ist_WrTmp: scan_use(st->Ist.WrTmp.data, instr); tdef[st->Ist.WrTmp.tmp] = instr; break;
   case Ist_Put: scan_use(st->Ist.Put.data, instr); break;
   case Ist_PutI: scan_use(st->Ist.PutI.details->ix, instr); scan_use(st->Ist.PutI.details->data, instr); break;
   case Ist_Store: scan_use(st->Ist.Store.addr, instr); scan_use(st->Ist.Store.data, instr); break;
   case Ist_StoreG:
      scan_use(st->Ist.StoreG.details->addr, instr); scan_use(st->Ist.StoreG.details->data, instr);
      scan_use(st->Ist.StoreG.details->guard, instr);
      break;
   case Ist_LoadG:
      scan_use(st->Ist.LoadG.details->addr, instr); scan_use(st->Ist.LoadG.details->alt, instr);
      scan_use(st->Ist.LoadG.details->guard, instr);
      tdef[st->Ist.LoadG.details->dst] = instr;
      break;
   case Ist_CAS: {
      IRCAS* c = st->Ist.CAS.details;
      scan_use(c->addr, instr); scan_use(c->expdLo, instr); scan_use(c->expdHi, instr);
      scan_use(c->dataLo, instr); scan_use(c->dataHi, instr);
      tdef[c->oldLo] = instr;
      if (c->oldHi != IRTemp_INVALID) tdef[c->oldHi] = instr;
      break;
   }
   case Ist_Dirty: {
      IRDirty* d = st->Ist.Dirty.details;
      for (i = 0; d->args[i]; i++)
         if (!is_IRExpr_VECRET_or_GSPTR(d->args[i])) scan_use(d->args[i], instr);
      scan_use(d->guard, instr);
      scan_use(d->mAddr, instr);
      if (d->tmp != IRTemp_INVALID) tdef[d->tmp] = instr;
      break;
   }
   case Ist_Exit: scan_use(st->Ist.Exit.guard, instr); break;
   default: break;
   }
}

static void ensure_tmp_arrays(Int n)
{
   if (n <= tcap) return;
   while (tcap < n) tcap = tcap ? tcap * 2 : 1024;
   tmask = VG_(realloc)("portcast.tmask", tmask, tcap * sizeof(ULong));
   tcomp = VG_(realloc)("portcast.tcomp", tcomp, tcap);
   tcls = VG_(realloc)("portcast.tcls", tcls, tcap * sizeof(Int));
   twide = VG_(realloc)("portcast.twide", twide, tcap);
   tinstr = VG_(realloc)("portcast.tinstr", tinstr, tcap * sizeof(Int));
   tdef = VG_(realloc)("portcast.tdef", tdef, tcap * sizeof(Int));
   tlater = VG_(realloc)("portcast.tlater", tlater, tcap);
   tloc = VG_(realloc)("portcast.tloc", tloc, tcap * sizeof(Int));
}

static IRSB* pc_instrument(VgCallbackClosure* closure, IRSB* bb, const VexGuestLayout* layout,
                           const VexGuestExtents* vge, const VexArchInfo* archinfo_host, IRType gWordTy,
                           IRType hWordTy)
{
   IRSB* sb;
   Int i, s, n_instr = 0, first_imark = -1;
   IRTemp recw;

   if (!instrumenting) return bb;
   if (gWordTy != hWordTy) VG_(tool_panic)("host/guest word size mismatch");
   ensure_tmp_arrays(bb->tyenv->types_used);
   for (i = 0; i < bb->tyenv->types_used; i++) {
      tinstr[i] = -1; tmask[i] = 0; tcomp[i] = 0; tcls[i] = -1; tdef[i] = -1; tlater[i] = 0; tloc[i] = -1;
      twide[i] = 0;
   }
   for (i = 0; i < N_LOCS; i++) loc_last_writer[i] = -1;
   cur_tyenv = bb->tyenv;

   /* pass 1: instruction boundaries */
   for (s = 0; s < bb->stmts_used; s++) {
      IRStmt* st = bb->stmts[s];
      if (st->tag == Ist_IMark) {
         tl_assert(n_instr < MAX_SB_INSTRS);
         if (first_imark < 0) first_imark = s;
         if (n_instr > 0) iinfo[n_instr - 1].end = s;
         iinfo[n_instr].first = s;
         iinfo[n_instr].addr = (Addr)st->Ist.IMark.addr;
         iinfo[n_instr].len = (Int)st->Ist.IMark.len;
         n_instr++;
      }
   }
   if (n_instr == 0) return bb;
   iinfo[n_instr - 1].end = bb->stmts_used;
   for (i = 0; i < n_instr; i++)
      for (s = iinfo[i].first + 1; s < iinfo[i].end; s++) scan_stmt(bb->stmts[s], i);
   for (i = 0; i < n_instr; i++) {
      Addr cont;
      if (i + 1 < n_instr) cont = iinfo[i + 1].addr;
      else if (bb->next->tag == Iex_Const && bb->next->Iex.Const.con->tag == Ico_U64)
         cont = (Addr)bb->next->Iex.Const.con->Ico.U64;
      else cont = (Addr)-1;
      iinfo[i].d = build_desc(&iinfo[i], i, bb, cont, i + 1 == n_instr);
      iinfo[i].is_cond = iinfo[i].d->is_cond;
   }

   /* pass 2: copy statements, adding the recording calls */
   sb = deepCopyIRSBExceptStmts(bb);
   for (s = 0; s < first_imark; s++) addStmtToIRSB(sb, bb->stmts[s]);
   recw = newIRTemp(sb->tyenv, Ity_I32);
   addStmtToIRSB(sb, IRStmt_WrTmp(recw, IRExpr_Load(Iend_LE, Ity_I32, mkIRExpr_HWord((HWord)&recording))));
   for (i = 0; i < n_instr; i++) {
      IInfo* ii = &iinfo[i];
      Addr fall = ii->addr + ii->len;
      Addr cont = (i + 1 < n_instr) ? iinfo[i + 1].addr
                : (bb->next->tag == Iex_Const && bb->next->Iex.Const.con->tag == Ico_U64)
                     ? (Addr)bb->next->Iex.Const.con->Ico.U64 : (Addr)-1;
      for (s = ii->first; s < ii->end; s++) {
         IRStmt* st = bb->stmts[s];
         Int a;
         if (st->tag == Ist_Exit) {
            Int nacc = 0;
            UChar taken = 0;
            for (a = 0; a < ii->n_acc; a++)
               if (ii->acc_stmt[a] < s) nacc++;
            if (ii->is_cond && st->Ist.Exit.dst->tag == Ico_U64)
               taken = (Addr)st->Ist.Exit.dst->Ico.U64 != fall;
            add_instr_call(sb, recw, ii, nacc, taken, st->Ist.Exit.guard);
         }
         addStmtToIRSB(sb, st);
         for (a = 2; a < ii->n_acc; a++)
            if (ii->acc_stmt[a] == s) add_note_call(sb, recw, ii->acc_addr[a]);
      }
      add_instr_call(sb, recw, ii, ii->n_acc, (UChar)(ii->is_cond ? (cont != fall) : 0), NULL);
   }
   return sb;
}
static IRSB* pc_instrument(VgCallbackClosure* closure, IRSB* bb_in, const VexGuestLayout* layout,
                           const VexGuestExtents* vge, const VexArchInfo* archinfo_host, IRType gWordTy,
                           IRType hWordTy);

/* in a forked child (fork, vfork run as fork, system, popen): only the process that was started is traced.
   The child drops the records it inherited unsent, closes its copies of the FIFOs (so that the reader's
   end-of-stream waits for the parent alone), leaves the ring, which the parent keeps filling, and ignores
   region markers from then on. Valgrind calls this in the child before it runs any client code. */
static void pc_atfork_child(ThreadId tid)
{
   detached = True;
   recording = 0;
   nest = 0;
   nbuf = 0;
   npending = 0;
   if (out_fd >= 0) VG_(close)(out_fd);
   out_fd = -1;
   if (credit_fd >= 0) VG_(close)(credit_fd);
   credit_fd = -1;
   shm_base = NULL;
   cb = (UChar*)cbuf_static;
}

static void pc_post_clo_init(void)
{
   HChar hello[64];
   Int n;
   if (clo_out) {
      SysRes sr = VG_(open)(clo_out, VKI_O_WRONLY | VKI_O_CREAT | VKI_O_TRUNC, 0600);
      if (sr_isError(sr)) {
         VG_(umsg)("portcast: cannot open --out=%s\n", clo_out);
         VG_(exit)(2);
      }
      out_fd = sr_Res(sr);
   }
   if (clo_shm) {
      SysRes sr;
      Int fd;
      tl_assert(BUF_RECS * COL_BYTES <= SHM_SLOT_BYTES);
      if (clo_shm_slots < 1 || !clo_credits || out_fd < 0) {
         VG_(umsg)("portcast: --shm needs --shm-slots >= 1, --credits and --out\n");
         VG_(exit)(2);
      }
      sr = VG_(open)(clo_shm, VKI_O_RDWR, 0);
      if (sr_isError(sr)) {
         VG_(umsg)("portcast: cannot open --shm=%s\n", clo_shm);
         VG_(exit)(2);
      }
      fd = sr_Res(sr);
      sr = VG_(am_shared_mmap_file_float_valgrind)((SizeT)clo_shm_slots * SHM_SLOT_BYTES,
                                                    VKI_PROT_READ | VKI_PROT_WRITE, fd, 0);
      VG_(close)(fd);
      if (sr_isError(sr)) {
         VG_(umsg)("portcast: cannot map --shm=%s\n", clo_shm);
         VG_(exit)(2);
      }
      shm_base = (UChar*)sr_Res(sr);
      cb = shm_base; /* slot 0 */
      sr = VG_(open)(clo_credits, VKI_O_RDONLY, 0);
      if (sr_isError(sr)) {
         VG_(umsg)("portcast: cannot open --credits=%s\n", clo_credits);
         VG_(exit)(2);
      }
      credit_fd = sr_Res(sr);
   }
   VG_(atfork)(NULL, NULL, pc_atfork_child);
   thr = VG_(calloc)("portcast.threads", VG_N_THREADS, sizeof(ThreadRegs));
   {
      UInt t;
      for (t = 0; t < VG_N_THREADS; t++) thr[t].tid = -1;
   }
   n = VG_(snprintf)(hello, sizeof hello, "portcast-vgtool 2 %d", (Int)COL_BYTES);
   send_msg(MSG_HELLO, hello, n);
   if (clo_all) {
      VG_(strcpy)(cur_region, "program");
      send_msg(MSG_REGION_START, cur_region, VG_(strlen)(cur_region));
      recording = 1;
      instrumenting = True;
   }
}

static void end_region(Bool by_exit)
{
   HChar msg[512];
   Int n;
   flush_records();
   n = VG_(snprintf)(msg, sizeof msg, "%llu %llu %llu %llu %llu %d %s", cur_instrs, cur_loads, cur_stores,
                     cur_branches, cur_dropped, (Int)by_exit, cur_region);
   send_msg(MSG_REGION_END, msg, n);
   total_instrs += cur_instrs;
   cur_instrs = cur_loads = cur_stores = cur_branches = cur_dropped = 0;
   recording = 0;
   nest = 0;
}

static void pc_fini(Int exitcode)
{
   HChar msg[64];
   Int n;
   if (recording) end_region(!clo_all);
   n = VG_(snprintf)(msg, sizeof msg, "%d %llu", exitcode, total_instrs);
   send_msg(MSG_FINI, msg, n);
   if (out_fd >= 0) VG_(close)(out_fd);
}

static Bool pc_process_cmd_line_option(const HChar* arg)
{
   if VG_STR_CLO(arg, "--out", clo_out) {}
   else if VG_STR_CLO(arg, "--region", clo_region) {}
   else if VG_BOOL_CLO(arg, "--all", clo_all) {}
   else if VG_STR_CLO(arg, "--shm", clo_shm) {}
   else if VG_STR_CLO(arg, "--credits", clo_credits) {}
   else if VG_INT_CLO(arg, "--shm-slots", clo_shm_slots) {}
   else return False;
   return True;
}

static void pc_print_usage(void)
{
   VG_(printf)("    --out=PATH        file or FIFO receiving the binary trace\n"
               "    --region=NAME     record only regions named NAME (default: every region)\n"
               "    --all=yes|no      record the whole program as region 'program' [no]\n"
               "    --shm=PATH        hand record blocks over in this ring file (mapped by the reader)\n"
               "    --shm-slots=K     slots of 2 MiB in the ring\n"
               "    --credits=FIFO    FIFO where the reader returns slots (one byte each)\n");
}

static void pc_print_debug_usage(void) {}

static Bool pc_handle_client_request(ThreadId tid, UWord* args, UWord* ret)
{
   if (!VG_IS_TOOL_USERREQ('P', 'C', args[0])) return False;
   *ret = 0;
   if (detached) return True;
   switch (args[0]) {
   case PC_REQ_REGION_START: {
      const HChar* name = (const HChar*)args[1];
      if (clo_all) return True;
      if (recording) { nest++; return True; }
      if (name == NULL) name = "region";
      if (clo_region && VG_(strcmp)(clo_region, name) != 0) return True;
      VG_(strncpy)(cur_region, name, sizeof cur_region - 1);
      cur_region[sizeof cur_region - 1] = 0;
      if (!instrumenting) { /* the first recorded region: from now on, code is instrumented */
         instrumenting = True;
         VG_(discard_translations_safely)((Addr)0x1000, ~(SizeT)0xfff, "portcast");
      }
      send_msg(MSG_REGION_START, cur_region, VG_(strlen)(cur_region));
      cur_tid = -1; /* every thread starts the region outside the parallel loop */
      {
         UInt t;
         for (t = 0; t < VG_N_THREADS; t++) thr[t].tid = -1;
      }
      recording = 1;
      return True;
   }
   case PC_REQ_REGION_END:
      if (clo_all || !recording) return True;
      if (nest > 0) { nest--; return True; }
      end_region(False);
      return True;
   case PC_REQ_THREAD:
      cur_tid = (Long)args[1];
      return True;
   default:
      return True;
   }
}

static void pc_pre_clo_init(void)
{
   VG_(details_name)("portcast");
   VG_(details_version)("1");
   VG_(details_description)("Portcast trace recorder");
   VG_(details_copyright_author)("Portcast authors");
   VG_(details_bug_reports_to)("the Portcast issue tracker");
   VG_(details_avg_translation_sizeB)(600);
   {
      Int i;
      for (i = 0; i < 8; i++) rt_temp[i] = TEMP_TOKEN + i;
   }
   VG_(basic_tool_funcs)(pc_post_clo_init, pc_instrument, pc_fini);
   VG_(needs_command_line_options)(pc_process_cmd_line_option, pc_print_usage, pc_print_debug_usage);
   VG_(needs_client_requests)(pc_handle_client_request);
   VG_(track_start_client_code)(pc_start_client_code);
   VG_(track_pre_thread_ll_create)(pc_thread_created);
   tl_assert(sizeof(VexGuestAMD64State) / 8 < LOC_SB_VALUE);
}


VG_DETERMINE_INTERFACE_VERSION(pc_pre_clo_init)
