noinst_LIBRARIES += libjpmodel.a
libjpmodel_a_SOURCES = \
	src/model/profile.c src/model/profile.h \
	src/model/frame_text.c src/model/frame_text.h \
	src/model/flame.c src/model/flame.h \
	src/model/diff.c src/model/diff.h \
	src/model/iodetail.c src/model/iodetail.h \
	src/model/units.c src/model/units.h \
	src/model/gc.c src/model/gc.h \
	src/model/heap.c src/model/heap.h \
	src/model/oldobj.c src/model/oldobj.h
libjpmodel_a_SOURCES += \
	src/model/snapshot.c src/model/snapshot.h \
	src/model/analyze.c src/model/analyze.h \
	src/model/busy.c src/model/busy.h
# which JVMs are profiled, from the jprof.io/ annotations (jprof(7)): the
# agent decides with it, kubectl-jprof status reads it back
libjpmodel_a_SOURCES += \
	src/model/policy.c src/model/policy.h
