# cc-examples.mk: a user's Makefile, as the cache tests build it: every
# example generator in EXAMPLES run at test size through protune-cc into
# OUT/NAME/NAME.a (with .h, .registration.cpp and .schedule.h).
#
#   make -f cc-examples.mk -jN EXAMPLES="blur harris" OUT=out \
#       GEN_DIR=$PT_BUILD_DIR/ex/bin [GEN_ARGS=machine_params=...]

PROTUNE_CC ?= protune-cc
GEN_DIR ?= $(PT_BUILD_DIR)/ex/bin
OUT ?= out
TARGET ?= host
GEN_ARGS ?= machine_params=2,16777216,40

define lib
$(OUT)/$(1)/$(1).a: $(GEN_DIR)/$(1).generator
	@mkdir -p $$(@D)
	$(PROTUNE_CC) $$< -g $(1) -o $$(@D) \
		-e static_library,h,registration,schedule -n $(1) \
		target=$(TARGET) size=test $(GEN_ARGS)
endef

all: $(foreach e,$(EXAMPLES),$(OUT)/$(e)/$(e).a)
$(foreach e,$(EXAMPLES),$(eval $(call lib,$(e))))
.PHONY: all
