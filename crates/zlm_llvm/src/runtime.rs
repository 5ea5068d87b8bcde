//! The IR every lowered module carries: LLVM intrinsic declarations, the
//! fault helpers, and the runtime of owned values (drop-log lines, the
//! custody list, byte-array storage and the bytes facade) written in IR,
//! so the JIT and the AOT executable run the same code. The only host
//! symbols are `malloc`, `free` and the two output hooks
//! `zlm_host_text`/`zlm_host_word` (the AOT driver and the JIT engine
//! define them).

/// The runtime IR (the module's tables `@zlm_fn_table` are emitted after it).
pub(crate) const RUNTIME_IR: &str = r#"declare ptr @llvm.stacksave.p0()
declare {i8, i1} @llvm.sadd.with.overflow.i8(i8, i8)
declare {i8, i1} @llvm.uadd.with.overflow.i8(i8, i8)
declare {i8, i1} @llvm.ssub.with.overflow.i8(i8, i8)
declare {i8, i1} @llvm.usub.with.overflow.i8(i8, i8)
declare {i8, i1} @llvm.smul.with.overflow.i8(i8, i8)
declare {i8, i1} @llvm.umul.with.overflow.i8(i8, i8)
declare {i16, i1} @llvm.sadd.with.overflow.i16(i16, i16)
declare {i16, i1} @llvm.uadd.with.overflow.i16(i16, i16)
declare {i16, i1} @llvm.ssub.with.overflow.i16(i16, i16)
declare {i16, i1} @llvm.usub.with.overflow.i16(i16, i16)
declare {i16, i1} @llvm.smul.with.overflow.i16(i16, i16)
declare {i16, i1} @llvm.umul.with.overflow.i16(i16, i16)
declare {i32, i1} @llvm.sadd.with.overflow.i32(i32, i32)
declare {i32, i1} @llvm.uadd.with.overflow.i32(i32, i32)
declare {i32, i1} @llvm.ssub.with.overflow.i32(i32, i32)
declare {i32, i1} @llvm.usub.with.overflow.i32(i32, i32)
declare {i32, i1} @llvm.smul.with.overflow.i32(i32, i32)
declare {i32, i1} @llvm.umul.with.overflow.i32(i32, i32)
declare {i64, i1} @llvm.sadd.with.overflow.i64(i64, i64)
declare {i64, i1} @llvm.uadd.with.overflow.i64(i64, i64)
declare {i64, i1} @llvm.ssub.with.overflow.i64(i64, i64)
declare {i64, i1} @llvm.usub.with.overflow.i64(i64, i64)
declare {i64, i1} @llvm.smul.with.overflow.i64(i64, i64)
declare {i64, i1} @llvm.umul.with.overflow.i64(i64, i64)

; Records a fault (kind, function index, block, op, detail index; -1 when
; absent) in the run state and returns its kind.
define internal i32 @zlm_raise(ptr %z, i32 %k, i64 %f, i64 %b, i64 %o, i64 %d) cold noinline {
entry:
  %kw = zext i32 %k to i64
  %p5 = getelementptr inbounds i64, ptr %z, i64 5
  store i64 %kw, ptr %p5
  %p6 = getelementptr inbounds i64, ptr %z, i64 6
  store i64 %f, ptr %p6
  %p7 = getelementptr inbounds i64, ptr %z, i64 7
  store i64 %b, ptr %p7
  %p8 = getelementptr inbounds i64, ptr %z, i64 8
  store i64 %o, ptr %p8
  %p9 = getelementptr inbounds i64, ptr %z, i64 9
  store i64 %d, ptr %p9
  ret i32 %k
}

; A fault inside a running frame: saves the step counter, leaves the frame.
define internal i32 @zlm_fault(ptr %z, i64 %zl, i32 %k, i64 %f, i64 %b, i64 %o, i64 %d) cold noinline {
entry:
  store i64 %zl, ptr %z
  %pd = getelementptr inbounds i64, ptr %z, i64 2
  %d0 = load i64, ptr %pd
  %d1 = sub i64 %d0, 1
  store i64 %d1, ptr %pd
  %r = call i32 @zlm_raise(ptr %z, i32 %k, i64 %f, i64 %b, i64 %o, i64 %d)
  ret i32 %r
}


declare void @llvm.memcpy.p0.p0.i64(ptr, ptr, i64, i1)
declare void @llvm.memset.p0.i64(ptr, i8, i64, i1)
declare ptr @malloc(i64)
declare void @free(ptr)

; The host's output: channel 0 the run's log (drop lines), channel 1 the
; rendered result. Text is NUL-terminated; a word is rendered by kind
; (0 unsigned, 1 signed, 2 Bool, 3 Unit).
declare void @zlm_host_text(ptr, i64, ptr)
declare void @zlm_host_word(ptr, i64, i64, i64)

@zlm_s_tab = private unnamed_addr constant [2 x i8] c"\09\00"
@zlm_s_nl = private unnamed_addr constant [2 x i8] c"\0A\00"
@zlm_s_d = private unnamed_addr constant [3 x i8] c"D\09\00"
@zlm_s_comma = private unnamed_addr constant [3 x i8] c", \00"
@zlm_s_bytes = private unnamed_addr constant [7 x i8] c"bytes[\00"
@zlm_s_close = private unnamed_addr constant [2 x i8] c"]\00"

; A drop-log owner name is a chain of {up, segment} nodes from the root.
define internal void @zlm_print_name(ptr %z, ptr %n) {
entry:
  %null = icmp eq ptr %n, null
  br i1 %null, label %done, label %go
go:
  %up = load ptr, ptr %n
  call void @zlm_print_name(ptr %z, ptr %up)
  %sp = getelementptr inbounds {ptr, ptr}, ptr %n, i64 0, i32 1
  %s = load ptr, ptr %sp
  call void @zlm_host_text(ptr %z, i64 0, ptr %s)
  br label %done
done:
  ret void
}

; One destroyed non-Copy owner: `D function owner type`.
define internal void @zlm_drop_line(ptr %z, i64 %fn, ptr %nm, ptr %ty) {
entry:
  call void @zlm_host_text(ptr %z, i64 0, ptr @zlm_s_d)
  %fp = getelementptr inbounds ptr, ptr @zlm_fn_table, i64 %fn
  %f = load ptr, ptr %fp
  call void @zlm_host_text(ptr %z, i64 0, ptr %f)
  call void @zlm_host_text(ptr %z, i64 0, ptr @zlm_s_tab)
  call void @zlm_print_name(ptr %z, ptr %nm)
  call void @zlm_host_text(ptr %z, i64 0, ptr @zlm_s_tab)
  call void @zlm_host_text(ptr %z, i64 0, ptr %ty)
  call void @zlm_host_text(ptr %z, i64 0, ptr @zlm_s_nl)
  ret void
}

; Custody: a frame's owner paths in the order they came into custody, as
; the interpreter's `custody` list (the C runtime's zlm_cust_*).
define internal i64 @zlm_cust_pos(ptr %c, i64 %n, i64 %pi) {
entry:
  br label %loop
loop:
  %i = phi i64 [0, %entry], [%i1, %next]
  %end = icmp uge i64 %i, %n
  br i1 %end, label %none, label %body
body:
  %p = getelementptr inbounds i64, ptr %c, i64 %i
  %x = load i64, ptr %p
  %hit = icmp eq i64 %x, %pi
  br i1 %hit, label %found, label %next
next:
  %i1 = add i64 %i, 1
  br label %loop
found:
  ret i64 %i
none:
  ret i64 -1
}

define internal void @zlm_cust_remove(ptr %c, ptr %np, i64 %pi) {
entry:
  %n = load i64, ptr %np
  br label %loop
loop:
  %i = phi i64 [0, %entry], [%i1, %next]
  %k = phi i64 [0, %entry], [%k1, %next]
  %end = icmp uge i64 %i, %n
  br i1 %end, label %done, label %body
body:
  %p = getelementptr inbounds i64, ptr %c, i64 %i
  %x = load i64, ptr %p
  %keep = icmp ne i64 %x, %pi
  br i1 %keep, label %put, label %next
put:
  %q = getelementptr inbounds i64, ptr %c, i64 %k
  store i64 %x, ptr %q
  %kp = add i64 %k, 1
  br label %next
next:
  %k1 = phi i64 [%k, %body], [%kp, %put]
  %i1 = add i64 %i, 1
  br label %loop
done:
  store i64 %k, ptr %np
  ret void
}

; REPLACE_COMMIT of root %pi; %cand is the candidate's custody position
; before it was taken (-1: none).
define internal void @zlm_cust_replace(ptr %c, ptr %np, i64 %pi, i64 %cand) {
entry:
  %n0 = load i64, ptr %np
  %had = call i64 @zlm_cust_pos(ptr %c, i64 %n0, i64 %pi)
  call void @zlm_cust_remove(ptr %c, ptr %np, i64 %pi)
  %n = load i64, ptr %np
  %no = icmp slt i64 %had, 0
  br i1 %no, label %done, label %ins
ins:
  %hc = icmp slt i64 %had, %cand
  %d = zext i1 %hc to i64
  %cp = sub i64 %cand, %d
  %cn = icmp sge i64 %cand, 0
  %pos0 = select i1 %cn, i64 %cp, i64 %n
  %big = icmp ugt i64 %pos0, %n
  %pos = select i1 %big, i64 %n, i64 %pos0
  br label %shift
shift:
  %i = phi i64 [%n, %ins], [%im, %move]
  %more = icmp ugt i64 %i, %pos
  br i1 %more, label %move, label %put
move:
  %im = sub i64 %i, 1
  %src = getelementptr inbounds i64, ptr %c, i64 %im
  %x = load i64, ptr %src
  %dst = getelementptr inbounds i64, ptr %c, i64 %i
  store i64 %x, ptr %dst
  br label %shift
put:
  %pp = getelementptr inbounds i64, ptr %c, i64 %pos
  store i64 %pi, ptr %pp
  %n1 = add i64 %n, 1
  store i64 %n1, ptr %np
  br label %done
done:
  ret void
}

; Byte-array storage: every block (a {prev, next} header before the
; bytes) is linked into one list, so the entry releases what a fault or
; the result left behind before it returns to the host.
@zlm_blocks = internal global {ptr, ptr} {ptr @zlm_blocks, ptr @zlm_blocks}

define internal ptr @zlm_mem_alloc(i64 %n) {
entry:
  %big = icmp ugt i64 %n, 4611686018427387904
  br i1 %big, label %fail, label %go
go:
  %sz = add i64 %n, 17
  %m = call ptr @malloc(i64 %sz)
  %null = icmp eq ptr %m, null
  br i1 %null, label %fail, label %link
link:
  %hn = getelementptr inbounds {ptr, ptr}, ptr @zlm_blocks, i64 0, i32 1
  %first = load ptr, ptr %hn
  %mn = getelementptr inbounds {ptr, ptr}, ptr %m, i64 0, i32 1
  store ptr %first, ptr %mn
  store ptr @zlm_blocks, ptr %m
  store ptr %m, ptr %first
  store ptr %m, ptr %hn
  %data = getelementptr inbounds i8, ptr %m, i64 16
  ret ptr %data
fail:
  ret ptr null
}

define internal void @zlm_mem_free(ptr %p) {
entry:
  %null = icmp eq ptr %p, null
  br i1 %null, label %done, label %go
go:
  %m = getelementptr inbounds i8, ptr %p, i64 -16
  %prev = load ptr, ptr %m
  %mn = getelementptr inbounds {ptr, ptr}, ptr %m, i64 0, i32 1
  %next = load ptr, ptr %mn
  %pn = getelementptr inbounds {ptr, ptr}, ptr %prev, i64 0, i32 1
  store ptr %next, ptr %pn
  store ptr %prev, ptr %next
  call void @free(ptr %m)
  br label %done
done:
  ret void
}

define internal void @zlm_mem_release_all() {
entry:
  br label %loop
loop:
  %hn = getelementptr inbounds {ptr, ptr}, ptr @zlm_blocks, i64 0, i32 1
  %first = load ptr, ptr %hn
  %empty = icmp eq ptr %first, @zlm_blocks
  br i1 %empty, label %done, label %free
free:
  %data = getelementptr inbounds i8, ptr %first, i64 16
  call void @zlm_mem_free(ptr %data)
  br label %loop
done:
  ret void
}

; Allocator.alloc(cap): Err(cap) beyond the byte limit (%z fields 11, 12:
; live bytes, limit), else an empty array of capacity %cap.
define internal i32 @zlm_bytes_alloc(ptr %z, i64 %cap, ptr %tag, ptr %ok, ptr %err) {
entry:
  %bp = getelementptr inbounds i64, ptr %z, i64 11
  %bytes = load i64, ptr %bp
  %lp = getelementptr inbounds i64, ptr %z, i64 12
  %lim = load i64, ptr %lp
  %t0 = call {i64, i1} @llvm.uadd.with.overflow.i64(i64 %bytes, i64 %cap)
  %t = extractvalue {i64, i1} %t0, 0
  %o = extractvalue {i64, i1} %t0, 1
  %total = select i1 %o, i64 -1, i64 %t
  %over = icmp ugt i64 %total, %lim
  br i1 %over, label %refuse, label %alloc
refuse:
  store i64 1, ptr %tag
  store i64 %cap, ptr %err
  ret i32 0
alloc:
  %p = call ptr @zlm_mem_alloc(i64 %cap)
  %null = icmp eq ptr %p, null
  br i1 %null, label %fail, label %done
fail:
  ret i32 11
done:
  store ptr %p, ptr %ok
  %lenp = getelementptr inbounds i64, ptr %ok, i64 1
  store i64 0, ptr %lenp
  %capp = getelementptr inbounds i64, ptr %ok, i64 2
  store i64 %cap, ptr %capp
  store i64 %t, ptr %bp
  store i64 0, ptr %tag
  ret i32 0
}

; Array.push(byte): grows as the interpreter's Vec (double, at least
; len + 1, at least 8); Err(1) when it must grow with the limit spent.
define internal i32 @zlm_bytes_push(ptr %z, ptr %b, i64 %byte, ptr %tag, ptr %err) {
entry:
  %lenp = getelementptr inbounds i64, ptr %b, i64 1
  %len = load i64, ptr %lenp
  %capp = getelementptr inbounds i64, ptr %b, i64 2
  %cap = load i64, ptr %capp
  %full = icmp eq i64 %len, %cap
  br i1 %full, label %grow, label %put
grow:
  %bp = getelementptr inbounds i64, ptr %z, i64 11
  %bytes = load i64, ptr %bp
  %lp = getelementptr inbounds i64, ptr %z, i64 12
  %lim = load i64, ptr %lp
  %spent = icmp uge i64 %bytes, %lim
  br i1 %spent, label %refuse, label %more
refuse:
  store i64 1, ptr %tag
  store i64 1, ptr %err
  ret i32 0
more:
  %nc0 = shl i64 %cap, 1
  %l1 = add i64 %len, 1
  %lt = icmp ult i64 %nc0, %l1
  %nc1 = select i1 %lt, i64 %l1, i64 %nc0
  %lt8 = icmp ult i64 %nc1, 8
  %nc = select i1 %lt8, i64 8, i64 %nc1
  %p = call ptr @zlm_mem_alloc(i64 %nc)
  %null = icmp eq ptr %p, null
  br i1 %null, label %fail, label %copy
fail:
  ret i32 11
copy:
  %old = load ptr, ptr %b
  %some = icmp ne i64 %len, 0
  br i1 %some, label %memcpy, label %swap
memcpy:
  call void @llvm.memcpy.p0.p0.i64(ptr %p, ptr %old, i64 %len, i1 false)
  br label %swap
swap:
  call void @zlm_mem_free(ptr %old)
  store ptr %p, ptr %b
  %dc = sub i64 %nc, %cap
  %nb = add i64 %bytes, %dc
  store i64 %nb, ptr %bp
  store i64 %nc, ptr %capp
  br label %put
put:
  %buf = load ptr, ptr %b
  %at = getelementptr inbounds i8, ptr %buf, i64 %len
  %by = trunc i64 %byte to i8
  store i8 %by, ptr %at
  %ln = add i64 %len, 1
  store i64 %ln, ptr %lenp
  store i64 0, ptr %tag
  ret i32 0
}

define internal void @zlm_bytes_free(ptr %z, ptr %b) {
entry:
  %bp = getelementptr inbounds i64, ptr %z, i64 11
  %bytes = load i64, ptr %bp
  %capp = getelementptr inbounds i64, ptr %b, i64 2
  %cap = load i64, ptr %capp
  %ge = icmp uge i64 %bytes, %cap
  %d = sub i64 %bytes, %cap
  %nb = select i1 %ge, i64 %d, i64 0
  store i64 %nb, ptr %bp
  %p = load ptr, ptr %b
  call void @zlm_mem_free(ptr %p)
  store ptr null, ptr %b
  ret void
}

define internal void @zlm_bytes_render(ptr %z, ptr %b) {
entry:
  call void @zlm_host_text(ptr %z, i64 1, ptr @zlm_s_bytes)
  %lenp = getelementptr inbounds i64, ptr %b, i64 1
  %len = load i64, ptr %lenp
  %buf = load ptr, ptr %b
  br label %loop
loop:
  %i = phi i64 [0, %entry], [%i1, %item]
  %end = icmp uge i64 %i, %len
  br i1 %end, label %done, label %body
body:
  %first = icmp eq i64 %i, 0
  br i1 %first, label %item, label %sep
sep:
  call void @zlm_host_text(ptr %z, i64 1, ptr @zlm_s_comma)
  br label %item
item:
  %at = getelementptr inbounds i8, ptr %buf, i64 %i
  %by = load i8, ptr %at
  %w = zext i8 %by to i64
  call void @zlm_host_word(ptr %z, i64 1, i64 0, i64 %w)
  %i1 = add i64 %i, 1
  br label %loop
done:
  call void @zlm_host_text(ptr %z, i64 1, ptr @zlm_s_close)
  ret void
}

"#;
