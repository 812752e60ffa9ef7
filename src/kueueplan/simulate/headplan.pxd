cimport cython

cdef unsigned long long _MASK, _K1, _K2, _K3

@cython.locals(z=cython.ulonglong)
cpdef unsigned long long signature_term(object value)

cdef class _Head:
    cdef public object wl, plan, bucket, order, plain, checks, fr, v, key, sort_tail, fifo_tail, tail_rank
    cdef public long height
    cdef public bint over
    cdef public object fit_from, live_from, rec_usage, rec_snap
    cdef public long long fit_c, live_c
    cdef public long version

cdef class HeadPlans

cdef class _Cohort

cdef class HeadPlan:
    cdef public HeadPlans plans
    cdef public _Cohort cohort
    cdef public object q, name, node, root, ghosts, usage_snap, cq, flavors
    cdef public list heads, parked, terms, steps
    cdef public Py_ssize_t pos, count, ghost_count
    cdef public long epoch, version, members
    cdef public bint detached, lower
    @cython.locals(parked=list, n=Py_ssize_t, pos=Py_ssize_t)
    cpdef _advance(self)
    cpdef list _flags(self)
    @cython.locals(cohort=_Cohort)
    cpdef _terms(self)
    cpdef term(self)
    cpdef sync_epoch(self)
    cpdef usage_copy(self)
    cpdef park(self, object record)
    @cython.locals(heads=list, parked=list)
    cpdef _swap(self, Py_ssize_t i, Py_ssize_t j)
    @cython.locals(admitted=_Head, head=_Head, heads=list, parked=list, i=Py_ssize_t)
    cpdef admit_head(self, object wl)
    @cython.locals(h=_Head, head=_Head, heads=list, i=Py_ssize_t, had_head=bint, cohort=_Cohort)
    cpdef pushed(self, object wl, object bucket_key, object bucket)
    @cython.locals(h=_Head, plans=HeadPlans, usage=dict, subtree=dict, borrowing=dict, own=dict)
    cpdef refresh(self, _Head h)

cdef class _Cohort:
    cdef public object key, root, snap, total, zero
    cdef public dict plans
    cdef public list active
    cdef public long epoch, snap_cycle
    @cython.locals(root=object, subtree=dict, usage=dict)
    cpdef free(self, object fr, dict free)
    cpdef snapshot(self, long cycle)

cdef class HeadPlans:
    cdef public bint priority_sorting, ranked
    cdef public object sim, enabled, total
    cdef public dict cohorts, active, _eligible, _refused, _term_lists
    @cython.locals(terms=list, steps=list, k=Py_ssize_t)
    cpdef terms_for(self, object name, long members, Py_ssize_t n)
    cpdef retotal(self, _Cohort cohort, object delta)
    @cython.locals(cohort=_Cohort)
    cpdef requeue_all(self, object key)
    @cython.locals(plan=HeadPlan, h=_Head, cohort=_Cohort, pos=Py_ssize_t, n=Py_ssize_t, epoch=long, room=object,
                   parks=bint, grouped=bint, heads=list, keep=list, fits=list, live=list, flags=list, free=dict,
                   room_c=cython.longlong, small=bint, delta=cython.ulonglong, step=cython.ulonglong, steps=list)
    cpdef nominate(self, long cycle)

cdef class FittingHeads:
    cdef public object root, heads, lost, key
    cdef public Py_ssize_t at
    cdef public bint looked, ordered, exact, ranked
    cpdef look(self)
    @cython.locals(h=_Head, heads=list, lost=list, subtree=dict, usage=dict, i=Py_ssize_t, at=Py_ssize_t, mixed=bint, total=double,
                   least=object, height=long)
    cpdef Py_ssize_t _least_fit(self) except -2
    @cython.locals(h=_Head, heads=list, lost=list, subtree=dict, usage=dict, n=Py_ssize_t)
    cpdef Py_ssize_t _first_fit(self) except -2
    @cython.locals(heads=list, at=Py_ssize_t)
    cpdef take(self)
    @cython.locals(lost=list, heads=list, h=_Head)
    cpdef claimed(self, object after)
    @cython.locals(h=_Head)
    cpdef finish(self, object message)
