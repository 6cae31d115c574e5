# examples.mk: builds the example generators and, for every size and
# variant, the generated library linked with Halide's RunGen driver.
# Included by the top-level Makefile (needs config.mk's HALIDE_* and NPROC).
#
#   $(B)ex/bin/NAME.generator            each generator, built once
#   $(B)ex/SIZE/NAME/VARIANT/NAME.a      generator output (also .h,
#                                        .registration.cpp, gen.log, and
#                                        gen.ms: the run's wall time in ms)
#   $(B)ex/SIZE/NAME/VARIANT/rungen      RunGen linked with NAME.a
#
# SIZE is `test` (small estimates) or `bench` (realistic ones); VARIANT is
# how the schedule is made (EX_VARIANTS, built by examples-test and
# examples-bench, and EX_TUNER_VARIANTS, built only on demand by
# bench/tuners.sh). Generator runs go through protune-cc, exactly as a
# user's build would run them.

EXAMPLES ?= $(sort $(patsubst $(srcdir)/examples/%/,%,$(dir \
	$(wildcard $(srcdir)/examples/*/*_generator.cpp))))
EX_VARIANTS := reference manual adams2019 mullapudi2016 protune
# The other schedule sources of the tuner comparison (doc/benchmark.md).
EX_TUNER_VARIANTS := adams2019-greedy li2018 protune-mcts-cost \
	protune-mcts-real protune-beam protune-greedy protune-random
EX_TARGET ?= host
EX_MACHINE_PARAMS ?= $(NPROC),16777216,40
EX := $(B)ex/
EX_CXXFLAGS := -std=c++17 -O1 -Wall -Wextra -isystem $(HALIDE_INCDIR)
RUNGEN_CXXFLAGS := -std=c++17 -O2 -isystem $(HALIDE_INCDIR) \
	-DHALIDE_NO_PNG -DHALIDE_NO_JPEG

# protune-cc tunes every generator run unless it asks for auto_schedule=false
# or for another autoscheduler.
#
# EX_ENV_VARIANT is the environment of the generator run; it is expanded
# with $(1) set to the variant's output directory.
EX_ARGS_reference := schedule=reference auto_schedule=false
EX_ARGS_manual := schedule=manual auto_schedule=false
EX_ARGS_adams2019 := auto_schedule=true machine_params=$(EX_MACHINE_PARAMS) \
	-p $(HALIDE_PLUGINDIR)/libautoschedule_adams2019.so -s Adams2019
# Adams2019 reads its search settings from the environment
# (src/autoschedulers/adams2019/AutoSchedule.cpp in Halide 14): HL_BEAM_SIZE
# (default 32), HL_NUM_PASSES (default 5 coarse-to-fine passes, 1 when the
# beam is 1) and HL_RANDOM_DROPOUT (default 100: no dropout, so HL_SEED is
# not used). They are set explicitly so that the caller's environment does
# not leak in.
EX_ENV_adams2019 := HL_BEAM_SIZE=32 HL_NUM_PASSES=5 HL_RANDOM_DROPOUT=100
EX_ARGS_adams2019-greedy := $(EX_ARGS_adams2019)
EX_ENV_adams2019-greedy := HL_BEAM_SIZE=1 HL_NUM_PASSES=1 HL_RANDOM_DROPOUT=100
EX_ARGS_mullapudi2016 := auto_schedule=true machine_params=$(EX_MACHINE_PARAMS) \
	-p $(HALIDE_PLUGINDIR)/libautoschedule_mullapudi2016.so -s Mullapudi2016
EX_ARGS_li2018 := auto_schedule=true machine_params=$(EX_MACHINE_PARAMS) \
	-p $(HALIDE_PLUGINDIR)/libautoschedule_li2018.so -s Li2018
# protune: protune-cc adds the ProTune plugin and serves it from a cache in
# the build tree (the git store is off: the build must not write into the
# source tree). EX_PROTUNE_ENV may add settings (PROTUNE_BUDGET=...).
# The `protune` variant tunes each miss for EX_PROTUNE_BUDGET_<size>
# seconds (the tests' small sizes briefly; `make demo` and `make bench` for
# longer).
EX_PROTUNE_BUDGET_test ?= 1
EX_PROTUNE_BUDGET_bench ?= 20
EX_ARGS_protune := machine_params=$(EX_MACHINE_PARAMS)
EX_ENV_protune = PROTUNE_CACHE_DIR=$(CURDIR)/$(EX)cache PROTUNE_STORE_DIR=off \
	PROTUNE_PLUGIN=$(CURDIR)/$(B)lib/libprotune_halide.so $(EX_PROTUNE_ENV)
EX_DEPS_protune := $(B)lib/libprotune_halide.so $(B)bin/protune-cc
EX_EMIT_protune := static_library,h,registration,schedule
EX_EMIT_reference := static_library,h,registration
EX_EMIT_manual := static_library,h,registration
EX_EMIT_adams2019 := static_library,h,registration,schedule
EX_EMIT_adams2019-greedy := static_library,h,registration,schedule
EX_EMIT_mullapudi2016 := static_library,h,registration,schedule
EX_EMIT_li2018 := static_library,h,registration,schedule

# The protune-* variants: protune's searches, each tuning from scratch into
# a cache of its own in the variant's directory (all sources share one key
# per pipeline and target, so a shared cache would answer the first
# source's schedule to all). No configuration file is read
# (PROTUNE_CONFIG=/dev/null); the settings are these. The plugin also
# leaves the pipeline's model in the directory (pipeline.model), for
# `protune tune`.
EX_TUNE_BUDGET ?= 60
EX_TUNE_BUDGET_REAL ?= 300
EX_TUNE_BUDGET_RANDOM ?= 60
EX_TUNE_SEED ?= 1
EX_TUNE_THREADS ?= 2
# ex_protune_env DIR SEARCH MEASURE BUDGET
ex_protune_env = PROTUNE_CONFIG=/dev/null PROTUNE_MODE=normal \
	PROTUNE_CACHE_DIR=$(CURDIR)/$(1)/cache PROTUNE_STORE_DIR=off \
	PROTUNE_PLUGIN=$(CURDIR)/$(B)lib/libprotune_halide.so \
	PROTUNE_DUMP_MODEL=$(CURDIR)/$(1)/pipeline.model \
	PROTUNE_SEARCH=$(2) PROTUNE_MEASURE=$(3) PROTUNE_BUDGET=$(4) \
	PROTUNE_SEED=$(EX_TUNE_SEED) PROTUNE_THREADS=$(EX_TUNE_THREADS) \
	$(EX_PROTUNE_ENV)
EX_ENV_protune-mcts-cost = \
	$(call ex_protune_env,$(1),mcts,off,$(EX_TUNE_BUDGET))
EX_ENV_protune-mcts-real = \
	$(call ex_protune_env,$(1),mcts,on,$(EX_TUNE_BUDGET_REAL))
EX_ENV_protune-beam = $(call ex_protune_env,$(1),beam,off,$(EX_TUNE_BUDGET))
EX_ENV_protune-greedy = $(call ex_protune_env,$(1),greedy,off,$(EX_TUNE_BUDGET))
EX_ENV_protune-random = \
	$(call ex_protune_env,$(1),random,on,$(EX_TUNE_BUDGET_RANDOM))
$(foreach v,mcts-cost mcts-real beam greedy random,\
	$(eval EX_ARGS_protune-$(v) := $$(EX_ARGS_protune))\
	$(eval EX_DEPS_protune-$(v) := $$(EX_DEPS_protune))\
	$(eval EX_EMIT_protune-$(v) := $$(EX_EMIT_protune)))

$(EX)obj/GenGen.o: $(HALIDE_TOOLSDIR)/GenGen.cpp
	$(call say,CXX,$<)
	@mkdir -p $(@D)
	$(Q)$(CXX) $(EX_CXXFLAGS) -c $< -o $@

$(EX)obj/RunGenMain.o: $(HALIDE_TOOLSDIR)/RunGenMain.cpp
	$(call say,CXX,$<)
	@mkdir -p $(@D)
	$(Q)$(CXX) $(RUNGEN_CXXFLAGS) -c $< -o $@

# ex_generator NAME
define ex_generator
$(EX)obj/$(1)_generator.o: $(srcdir)/examples/$(1)/$(1)_generator.cpp \
		$(srcdir)/examples/common/pt_example.h
	$$(call say,CXX,$$<)
	@mkdir -p $$(@D)
	$$(Q)$$(CXX) $$(EX_CXXFLAGS) -c $$< -o $$@

$(EX)bin/$(1).generator: $(EX)obj/$(1)_generator.o $(EX)obj/GenGen.o
	$$(call say,LD,$$@)
	@mkdir -p $$(@D)
	$$(Q)$$(CXX) $$(LDFLAGS) $$^ $$(HALIDE_LIBS) -ldl -lpthread -o $$@
endef

# ex_variant NAME SIZE VARIANT
define ex_variant
$(EX)$(2)/$(1)/$(3)/$(1).a: $(EX)bin/$(1).generator $(EX_DEPS_$(3)) | \
		$(B)bin/protune-cc
	$$(call say,GEN,$(2)/$(1)/$(3))
	@mkdir -p $$(@D)
	$$(Q)t0=$$$$(date +%s%N); \
	env PROTUNE_BUDGET=$(EX_PROTUNE_BUDGET_$(2)) \
		$(call EX_ENV_$(3),$(EX)$(2)/$(1)/$(3)) \
		$(B)bin/protune-cc $(EX)bin/$(1).generator -g $(1) -o $$(@D) \
		-e $(EX_EMIT_$(3)) -n $(1) target=$$(EX_TARGET) size=$(2) \
		$(EX_ARGS_$(3)) >$$(@D)/gen.log 2>&1 || \
		{ cat $$(@D)/gen.log >&2; rm -f $$@; exit 1; }; \
	echo $$$$(( ($$$$(date +%s%N) - t0) / 1000000 )) >$$(@D)/gen.ms

$(EX)$(2)/$(1)/$(3)/rungen: $(EX)$(2)/$(1)/$(3)/$(1).a $(EX)obj/RunGenMain.o
	$$(call say,LD,$$@)
	$$(Q)$$(CXX) $$(RUNGEN_CXXFLAGS) $$(LDFLAGS) $(EX)obj/RunGenMain.o \
		$$(@D)/$(1).registration.cpp $$< -ldl -lpthread -o $$@
endef

$(foreach n,$(EXAMPLES),$(eval $(call ex_generator,$(n))))
$(foreach n,$(EXAMPLES),$(foreach s,test bench,\
	$(foreach v,$(EX_VARIANTS) $(EX_TUNER_VARIANTS),\
	$(eval $(call ex_variant,$(n),$(s),$(v))))))

ex_rungens = $(foreach n,$(EXAMPLES),$(foreach v,$(2),$(EX)$(1)/$(n)/$(v)/rungen))

examples: $(EXAMPLES:%=$(EX)bin/%.generator)
examples-test: $(call ex_rungens,test,$(EX_VARIANTS)) $(B)tests/pt-imgcmp
examples-bench: $(call ex_rungens,bench,$(EX_VARIANTS)) $(B)tests/pt-imgcmp
DEMO_SIZE ?= bench
examples-demo: $(call ex_rungens,$(DEMO_SIZE),reference manual adams2019 protune) \
	$(B)tests/pt-imgcmp
.PHONY: examples-demo
