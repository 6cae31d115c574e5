# protune.mk: GNU Make rules that build Halide generators and run them
# through protune-cc, so that every schedule comes from protune's cache (or
# is tuned on a miss). Installed as $(datadir)/protune/protune.mk; the guide
# is doc/make-rules.md. Needs GNU Make 4.3 or later (grouped targets).
#
#   PROTUNE_PREFIX := /usr/local
#   include $(PROTUNE_PREFIX)/share/protune/protune.mk
#
#   $(call protune_generator,blur,src/blur_generator.cpp)
#   $(call protune_library,blur,blur,out,size=test)
#
#   all: $(PROTUNE_LIBRARIES)
#
# protune_generator NAME,SOURCES[,LIBS]
#     Builds the generator program $(PROTUNE_GENDIR)/NAME.generator from
#     SOURCES (C++ files that register generators) and GenGen.o, which is
#     compiled once for all generators. LIBS are linked in as well.
#
# protune_library NAME,GENERATOR,OUTDIR[,PARAMS[,GENNAME]]
#     Runs the generator through protune-cc:
#       $(PROTUNE_CC) PROGRAM -g GENNAME -f NAME -n NAME -o OUTDIR \
#           -e $(PROTUNE_EMIT) target=$(PROTUNE_TARGET) PARAMS
#     making OUTDIR/NAME.a, OUTDIR/NAME.h and whatever else PROTUNE_EMIT
#     asks for, in one run (grouped targets: `make -j` never runs it
#     twice). GENERATOR is a NAME given to protune_generator, or the path
#     of a generator program built otherwise (any word with a `/`, such as
#     ./gen/foo). GENNAME, the generator's registered name, defaults to the
#     program's file name without `.generator`. PARAMS are generator
#     params and GenGen options (`size=test machine_params=...`); write
#     ones with commas in a variable and pass the variable. target= in
#     PARAMS replaces $(PROTUNE_TARGET).
#
# Both expand to nothing; write each on a line of its own. Set the
# variables they read (PROTUNE_GENDIR, PROTUNE_EMIT, PROTUNE_EMIT_SCHEDULE,
# PROTUNE_TARGET, PROTUNE_EXTRA_DEPS) before the call that should see them;
# the rest are read when the recipes run.
#
# Outputs depend on the generator program and on PROTUNE_EXTRA_DEPS, not on
# protune-cc or its plugin: like a compiler cache, a new protune answers
# the same schedules for the same keys, so it does not force every
# generator to run again. Set PROTUNE_EXTRA_DEPS = $(PROTUNE_CC) to get
# that behaviour.

protune_mk_dir := $(patsubst %/,%,$(dir $(abspath $(lastword $(MAKEFILE_LIST)))))
# Neither this file nor the calls choose the default goal: the including
# makefile's first rule stays the default.
protune__goal := $(.DEFAULT_GOAL)

ifeq ($(filter grouped-target,$(.FEATURES)),)
$(error protune.mk needs GNU Make 4.3 or later (grouped targets); this is GNU Make $(MAKE_VERSION))
endif

# --- protune ----------------------------------------------------------------
# PROTUNE_PREFIX: where protune is installed. Unset, the programs are looked
# for next to this file (../../bin from $(datadir)/protune), then on PATH.
PROTUNE_PREFIX ?=
ifdef PROTUNE_PREFIX
PROTUNE_BINDIR ?= $(PROTUNE_PREFIX)/bin
else
PROTUNE_BINDIR ?= $(abspath $(protune_mk_dir)/../../bin)
endif
ifndef PROTUNE_CC
PROTUNE_CC := $(if $(or $(PROTUNE_PREFIX),$(wildcard $(PROTUNE_BINDIR)/protune-cc)),$(PROTUNE_BINDIR)/protune-cc,protune-cc)
endif
ifndef PROTUNE
PROTUNE := $(if $(or $(PROTUNE_PREFIX),$(wildcard $(PROTUNE_BINDIR)/protune)),$(PROTUNE_BINDIR)/protune,protune)
endif

# protune's settings (doc/configuration.md). One set in a makefile is passed
# to protune-cc when it is not empty; one from the environment or the
# command line reaches it anyway; one left unset is not passed, and
# protune's configuration files and defaults decide.
PROTUNE_SETTINGS := PROTUNE_CONFIG PROTUNE_CACHE_DIR PROTUNE_STORE_DIR \
	PROTUNE_BUDGET PROTUNE_DECISION_TIME PROTUNE_MODE PROTUNE_SEED \
	PROTUNE_THREADS PROTUNE_MEASURE PROTUNE_LOG PROTUNE_MAX_SIZE \
	PROTUNE_SEARCH

PROTUNE_TARGET ?= host
PROTUNE_EMIT ?= static_library,h
PROTUNE_EMIT_SCHEDULE ?=
PROTUNE_GENDIR ?= gen
PROTUNE_GEN_CXX ?= $(CXX)
PROTUNE_GEN_CXXFLAGS ?= -O1
PROTUNE_GEN_LDFLAGS ?=
PROTUNE_EXTRA_DEPS ?=

# --- Halide -----------------------------------------------------------------
# Debian's libhalide14-0-dev by default; HALIDE_ROOT for a Halide release or
# install tree (include/, lib/libHalide.so, share/.../tools/GenGen.cpp).
HALIDE_VERSION ?= 14
ifdef HALIDE_ROOT
HALIDE_INCDIR ?= $(HALIDE_ROOT)/include
HALIDE_LIBDIR ?= $(HALIDE_ROOT)/lib
HALIDE_LIBS ?= -L$(HALIDE_LIBDIR) -Wl,-rpath,$(HALIDE_LIBDIR) -lHalide
HALIDE_TOOLSDIR ?= $(patsubst %/,%,$(dir $(firstword $(wildcard \
	$(HALIDE_ROOT)/share/Halide/tools/GenGen.cpp \
	$(HALIDE_ROOT)/share/tools/GenGen.cpp $(HALIDE_ROOT)/tools/GenGen.cpp))))
else
HALIDE_INCDIR ?= /usr/include/halide$(HALIDE_VERSION)
HALIDE_LIBS ?= -lHalide$(HALIDE_VERSION)
HALIDE_TOOLSDIR ?= /usr/src/halide$(HALIDE_VERSION)
endif
GENGEN ?= $(HALIDE_TOOLSDIR)/GenGen.cpp
RUNGENMAIN ?= $(HALIDE_TOOLSDIR)/RunGenMain.cpp
HALIDE_CXXFLAGS ?= -std=c++17 -isystem $(HALIDE_INCDIR)
# What a program linked with a generated library needs besides it.
HALIDE_RUNTIME_LIBS ?= -ldl -lpthread

# --- what the calls made -----------------------------------------------------
PROTUNE_GENERATORS :=
PROTUNE_LIBRARIES :=
PROTUNE_OUTPUTS :=

# --- internals (protune__*) --------------------------------------------------
protune__gengen_o :=
protune__comma := ,
protune__empty :=
protune__space := $(protune__empty) $(protune__empty)

# The file each -e kind makes, as Halide 14 names it.
protune__sfx.static_library := .a
protune__sfx.c_header := .h
protune__sfx.h := .h
protune__sfx.registration := .registration.cpp
protune__sfx.schedule := .schedule.h
protune__sfx.object := .o
protune__sfx.o := .o
protune__sfx.assembly := .s
protune__sfx.bitcode := .bc
protune__sfx.llvm_assembly := .ll
protune__sfx.stmt := .stmt
protune__sfx.stmt_html := .stmt.html
protune__sfx.c_source := .halide_generated.cpp
protune__sfx.cpp_stub := .stub.h
protune__sfx.featurization := .featurization
protune__sfx.compiler_log := .halide_compiler_log

# protune__emit: the -e list, with `schedule` added on request.
protune__emit = $(PROTUNE_EMIT)$(if $(filter 1 yes on true,\
	$(PROTUNE_EMIT_SCHEDULE)),$(if $(filter schedule,$(subst \
	$(protune__comma),$(protune__space),$(PROTUNE_EMIT))),,$(protune__comma)schedule))

# protune__outputs NAME,OUTDIR,EMIT
protune__outputs = $(sort $(foreach e,$(subst $(protune__comma),$(protune__space),$(3)),\
	$(if $(protune__sfx.$(e)),$(2)/$(1)$(protune__sfx.$(e)))))

# protune__program GENERATOR: the program to run.
protune__program = $(if $(findstring /,$(1)),$(1),$(PROTUNE_GENDIR)/$(1).generator)

# The settings set in a makefile, as shell assignments for the recipe.
protune__quote = '$(subst ','\'',$(1))'
protune__env = $(strip $(foreach v,$(PROTUNE_SETTINGS),$(if $(and $(filter file \
	override,$(origin $(v))),$(strip $($(v)))),$(v)=$(call protune__quote,$($(v))))))

# Missing Halide files: a clear message instead of "No rule to make target".
protune__need = $(or $(wildcard $(1)),protune__missing_$(2))
.PHONY: protune__missing_gengen protune__missing_halide_h
protune__missing_gengen:
	@echo "protune.mk: no GenGen.cpp at '$(GENGEN)'; install Halide (Debian: libhalide$(HALIDE_VERSION)-0-dev) or set HALIDE_ROOT, HALIDE_TOOLSDIR or GENGEN" >&2; exit 1
protune__missing_halide_h:
	@echo "protune.mk: no Halide.h in '$(HALIDE_INCDIR)'; install Halide (Debian: libhalide$(HALIDE_VERSION)-0-dev) or set HALIDE_ROOT or HALIDE_INCDIR" >&2; exit 1

# GenGen.o, defined by the first protune_generator (PROTUNE_GENDIR is read
# then, not when this file is included).
define protune__gengen
protune__gengen_o := $(PROTUNE_GENDIR)/obj/GenGen.o
$(PROTUNE_GENDIR)/obj/GenGen.o: $(call protune__need,$(GENGEN),gengen) \
		| $(call protune__need,$(HALIDE_INCDIR)/Halide.h,halide_h)
	@mkdir -p $$(@D)
	$$(PROTUNE_GEN_CXX) $$(HALIDE_CXXFLAGS) $$(PROTUNE_GEN_CXXFLAGS) -c $$< -o $$@
endef

# protune__genobj NAME,SOURCE
define protune__genobj
$(PROTUNE_GENDIR)/obj/$(1)/$(basename $(notdir $(2))).o: $(2) \
		| $(call protune__need,$(HALIDE_INCDIR)/Halide.h,halide_h)
	@mkdir -p $$(@D)
	$$(PROTUNE_GEN_CXX) $$(HALIDE_CXXFLAGS) $$(PROTUNE_GEN_CXXFLAGS) -MMD -MP -c $$< -o $$@
-include $(PROTUNE_GENDIR)/obj/$(1)/$(basename $(notdir $(2))).d
endef

# protune__generator NAME,SOURCES,LIBS
define protune__generator
$(PROTUNE_GENDIR)/$(1).generator: $(foreach s,$(2),$(PROTUNE_GENDIR)/obj/$(1)/$(basename $(notdir $(s))).o) \
		$(protune__gengen_o)
	@mkdir -p $$(@D)
	$$(PROTUNE_GEN_CXX) $$(PROTUNE_GEN_LDFLAGS) $$^ $(3) $$(HALIDE_LIBS) -ldl -lpthread -o $$@
PROTUNE_GENERATORS += $(PROTUNE_GENDIR)/$(1).generator
endef

protune_generator = $(strip $(eval protune__goal := $(.DEFAULT_GOAL))\
	$(if $(strip $(1)),,$(error protune_generator: no NAME))\
	$(if $(strip $(2)),,$(error protune_generator $(1): no SOURCES))\
	$(if $(filter $(PROTUNE_GENDIR)/$(strip $(1)).generator,$(PROTUNE_GENERATORS)),\
		$(error protune_generator $(1): defined twice))\
	$(if $(protune__gengen_o),,$(eval $(protune__gengen)))\
	$(if $(filter-out 1,$(foreach b,$(sort $(basename $(notdir $(2)))),\
		$(words $(filter $(b),$(basename $(notdir $(2))))))),\
		$(error protune_generator $(1): two SOURCES with the same file name))\
	$(foreach s,$(2),$(eval $(call protune__genobj,$(strip $(1)),$(s))))\
	$(eval $(call protune__generator,$(strip $(1)),$(strip $(2)),$(3)))\
	$(eval .DEFAULT_GOAL := $(protune__goal)))

# protune__library NAME,PROGRAM,OUTDIR,PARAMS,GENNAME,EMIT,OUTPUTS
define protune__library
$(7) &: $(2) $(PROTUNE_EXTRA_DEPS)
	@mkdir -p $(3)
	$$(protune__env) $$(PROTUNE_CC) $(2) -g $(5) -f $(1) -n $(1) -o $(3) -e $(6) $(strip $(if $(filter target=%,$(4)),,target=$(PROTUNE_TARGET)) $(4))
PROTUNE_LIBRARIES += $(filter %.a,$(7))
PROTUNE_OUTPUTS += $(7)
endef

protune__library_call = $(if $(strip $(7)),,$(error protune_library $(1): \
	PROTUNE_EMIT '$(strip $(6))' names no file protune.mk knows))$(eval \
	$(call protune__library,$(strip $(1)),$(strip $(2)),$(strip $(3)),$(strip \
	$(4)),$(strip $(5)),$(strip $(6)),$(strip $(7))))

protune_library = $(strip $(eval protune__goal := $(.DEFAULT_GOAL))\
	$(if $(strip $(1)),,$(error protune_library: no NAME))\
	$(if $(strip $(2)),,$(error protune_library $(1): no GENERATOR))\
	$(if $(strip $(3)),,$(error protune_library $(1): no OUTDIR))\
	$(call protune__library_call,$(strip $(1)),\
		$(call protune__program,$(strip $(2))),\
		$(patsubst %/,%,$(strip $(3))),$(strip $(4)),\
		$(or $(strip $(5)),$(patsubst %.generator,%,$(notdir $(strip $(2))))),\
		$(protune__emit),\
		$(call protune__outputs,$(strip $(1)),$(patsubst %/,%,$(strip $(3))),$(protune__emit)))\
	$(eval .DEFAULT_GOAL := $(protune__goal)))

.DEFAULT_GOAL := $(protune__goal)
