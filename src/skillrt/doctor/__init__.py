"""``skillrt doctor``: a skill catalogue's health, found offline with the real router.

:func:`skillrt.doctor.service.diagnose` builds the report
(:class:`skillrt.doctor.model.DoctorReport`); :mod:`skillrt.doctor.analysis` routes the
pseudo-requests; :mod:`skillrt.doctor.html` renders the page.
"""
