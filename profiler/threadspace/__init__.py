"""The GPU thread space of a region, chosen from the source before the region runs.

A GPU port turns loops whose iterations are independent into kernels: each iteration becomes a thread, each
execution of the loop a launch. This module reads the region's source (the root function or marked block and
every user function it calls, resolved as the instrumenter resolves them) and decides which loops those are:

* **marked** loops (``numba.prange`` / ``portcast.parallel``) are the thread space wherever they sit: in the
  region itself or in a function it calls; inside a marked loop nothing else is;
* with no mark anywhere, the **outermost loop that analysis finds independent** (or a reduction, or an
  update through atomics) on each path from the region's entry; a loop that carries a dependence is a host
  loop, and the search goes on inside it and inside the functions it calls (a solver's iteration loop runs on
  the host, the kernels are the loops inside it);
* a kernel loop whose body is exactly one further loop with no carried dependence, whose range does not
  depend on the outer loop's index, is collapsed with it into a multi-dimensional thread space (the threads
  are numbered by linear index over the whole nest); an inner loop over ``range(gid, n, total)`` (a
  grid-stride loop) or ``range(i)`` stays inside the outer loop's threads;
* statements between the loop headers of such a nest (an **imperfect nest**) that only compute a scalar from
  the outer indices, values fixed before the nest and each other are **sunk** into the inner loop: a GPU
  thread recomputes them from its indices, so the nest still collapses into an inner loop without
  dependences (:func:`_sink_barrier` says what may be sunk; anything else between the headers, or an inner
  reduction or atomic loop, keeps the outer loop's threads, as before).

The analysis is static and conservative where it must guess; the trace of the region is checked afterwards
for the dependences it actually has (features/thread_dependences.py), which is the verdict a porter should trust.

What counts as a dependence of loop ``L`` (iteration variable ``i``):

* a **scalar** local read before it is assigned in an iteration and assigned somewhere in the loop (its value
  flows from one iteration to the next), unless every use of it is a reduction statement (``s += e``,
  ``s = s * e``, ``s = max(s, e)``, ``if e < s: s = e`` with companions such as an argmin index): then it is a
  **reduction** (a GPU does it with a tree reduction or atomics, at a cost);
* a **store** ``a[idx] = ...`` (also through called functions) whose index does not depend on ``i``: every
  iteration writes the same element (a conflict), except ``a[idx] += ...``, an **atomic** update (a
  histogram);
* a **load** of an array the loop also stores, at an index written differently from every store of it
  (``u[i - 1]`` while storing ``u[i]``): a possible carried dependence through memory;
* a ``while`` loop, a ``break`` of the loop or a ``return`` inside it (the trip count depends on the order),
  and growing a Python list (``.append``), unless the body appends exactly once per iteration, unconditionally
  (entry ``k`` is iteration ``k``'s value: a map).

A scalar ``n`` used only as the whole index of stores and advanced by a positive constant (``buf[n] = v;
n += 1``: a stack push, a stream compaction) is an **append counter**: a GPU thread takes its slot with an
atomic add, so the loop is atomic (the entries' order may differ), and the counter's register is checked on
the trace as a reduction variable's.

Arrays created inside an iteration (``tmp = np.zeros(3)``) and arrays local to a called function are private
and never conflict. So is an array made outside the loop (a row buffer ``u1 = np.empty(n1)``), or a parameter
or global, that every iteration **writes before it reads** (:class:`_Coverage`): the loop stores it, directly
and only at elements that do not depend on ``i``, and reads it, and every load lies in a region the same
iteration surely wrote before (``b[k]`` over ``for k in range(lo, hi)`` wrote ``b[lo:hi]``, bounds compared
up to constant offsets). It is a per-thread buffer on a GPU: its stores and loads are no dependence, the
kernel loop's ``private`` entry names it, and its stores' pcs go to the metadata's ``private_pcs`` (the check
on the trace counts no write between threads there). Its values seen after the loop (a parameter, a global,
read elsewhere in the function) are the last iteration's: a note, not a dependence. An array read before the
iteration writes it carries a value from an earlier iteration (a reason says so).

The package, by concern: :mod:`.source_facts` (what one function's source says: loops, loads and stores, calls),
:mod:`.scalars` (carried scalars, reductions, scans, append counters), :mod:`.privatisation` (arrays every
iteration writes before it reads), :mod:`.sinking` (statements sunk into an imperfect nest), :mod:`.verdict`
(one loop's verdict and its reasons) and :mod:`.plan` (the loops chosen as the thread space).
"""

from .plan import Analysis, analyse_block, analyse_function

__all__ = ["Analysis", "analyse_block", "analyse_function"]
