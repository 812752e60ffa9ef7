cimport cython

cdef unsigned long long _MASK, _K1, _K2, _K3

@cython.locals(z=cython.ulonglong)
cpdef unsigned long long signature_term(object value)

cdef class _Head:
    cdef public object wl, plan, bucket, order, plain, checks, fr, v, key, sort_tail, fifo_tail, height
    cdef public bint over
    cdef public object fit_from, live_from, rec_usage, rec_snap
    cdef public long long fit_c, live_c
    cdef public long version

cdef class HeadPlans

cdef class HeadPlan:
    cdef public HeadPlans plans
    cdef public object cohort, q, name, node, root, heads, parked, ghosts, terms, steps, usage_snap, cq, flavors
    cdef public Py_ssize_t pos, count, ghost_count
    cdef public long epoch, version, members
    cdef public bint detached, lower
    @cython.locals(h=_Head, plans=HeadPlans, usage=dict, subtree=dict, borrowing=dict, own=dict)
    cpdef refresh(self, _Head h)

cdef class _Cohort:
    cdef public object key, root, plans, active, snap, total, zero
    cdef public long epoch, snap_cycle

cdef class HeadPlans:
    cdef public bint priority_sorting
    cdef public object sim, enabled, cohorts, active, total, _eligible, _refused, _term_lists
    @cython.locals(plan=HeadPlan, h=_Head, cohort=_Cohort, pos=Py_ssize_t, n=Py_ssize_t, epoch=long, room=object,
                   parks=bint, grouped=bint, heads=list, keep=list, fits=list, live=list, flags=object,
                   room_c=cython.longlong, small=bint, delta=cython.ulonglong, step=cython.ulonglong)
    cpdef nominate(self, long cycle)

cdef class FittingHeads:
    cdef public object root, heads, lost, key
    cdef public Py_ssize_t at
    cdef public bint looked, ordered, exact
    cpdef look(self)
    @cython.locals(h=_Head, heads=list, lost=list, subtree=dict, usage=dict, i=Py_ssize_t, at=Py_ssize_t, mixed=bint, total=double)
    cpdef Py_ssize_t _least_fit(self) except -2
    @cython.locals(h=_Head, heads=list, lost=list, subtree=dict, usage=dict, n=Py_ssize_t)
    cpdef Py_ssize_t _first_fit(self) except -2
    @cython.locals(heads=list, at=Py_ssize_t)
    cpdef take(self)
    @cython.locals(lost=list, heads=list, h=_Head)
    cpdef claimed(self, object after)
    @cython.locals(h=_Head)
    cpdef finish(self, object message)
