# nxvk - GNU make (gmake on the BSDs).  `make help` lists the targets.

PREFIX ?= /usr/local
CC ?= cc
GLSLANG ?= glslangValidator
PYTHON ?= /usr/bin/python3

WARN = -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes -Wno-unused-parameter -Wno-psabi
CSTD = -std=c11 -D_POSIX_C_SOURCE=200809L -D_DEFAULT_SOURCE
OPT ?= -O2 -g
CFLAGS ?=
CPPFLAGS += -Isrc -Ibuild/gen
ALL_CFLAGS = $(CSTD) $(OPT) $(WARN) $(CPPFLAGS) $(CFLAGS) $(EXTRA_CFLAGS)
# glslang's C interface links statically (Debian's glslang-dev ships .a only)
GLSLANG_LIBS = -lglslang -lSPIRV -lglslang-default-resource-limits -lMachineIndependent \
  -lOSDependent -lGenericCodeGen -lOGLCompiler -lSPIRV-Tools-opt -lSPIRV-Tools -lstdc++
LIBS = -lcjson -lcsv -lz $(GLSLANG_LIBS) -lpthread -ldl -lm
LDFLAGS ?=
ALL_LDFLAGS = $(LDFLAGS) $(EXTRA_LDFLAGS)

G = build
B = build/obj$(FLAVOR)
BIN = nxvk$(FLAVOR)
SRC_CORE = $(wildcard src/core/*.c) $(wildcard src/vk/*.c) $(wildcard src/ops/*.c) $(wildcard src/io/*.c)
SRC_CLI = src/main.c $(wildcard src/cmd_*.c) $(wildcard src/cli/*.c)
OBJ_CORE = $(SRC_CORE:%.c=$(B)/%.o) $(B)/gen/spirv_table.o $(B)/gen/glsl_lib.o $(B)/gen/limits_json.o \
  $(B)/gen/edge_values_json.o $(B)/gen/size_classes_json.o
OBJ_CLI = $(SRC_CLI:%.c=$(B)/%.o)

# ---- shaders --------------------------------------------------------------
# Elementwise shaders are generated from src/ops/elementwise.def; the others
# are hand-written and compiled once per variant (-D defines).
GLSL_LIB = shaders/lib/nxmath.glsl shaders/lib/nx.glsl
DTYPES = f32 f64 i32 u8
# names as genshaders makes them (ALL/FLOAT/SIGNED are the dtype sets of elementwise.def)
EW_NAMES := $(shell awk -f tools/ew_names.awk src/ops/elementwise.def)
EW_SPV = $(EW_NAMES:%=$(G)/spv/%.spv)

# name:source:defines
HAND_VARIANTS = \
  $(foreach d,$(DTYPES),reduce_$(d):reduce:-DDT_$(d) argreduce_$(d):reduce:-DDT_$(d)@-DARG) \
  $(foreach d,f32 f64,dot_tiled_$(d):dot_tiled:-DDT_$(d) dot_vec_$(d):dot_vec:-DDT_$(d) dot_naive_$(d):dot_naive:-DDT_$(d)) \
  $(foreach d,f32 f64,dot_vec1_$(d):dot_vec1:-DDT_$(d) dot_vec_split_$(d):dot_vec:-DDT_$(d)@-DSPLITK dot_ksum_$(d):dot_ksum:-DDT_$(d)) dot_kchunk:dot_kchunk: \
  dot_vec_strided_f32:dot_vec:-DDT_f32@-DSTRIDED \
  dot_vec128_f64:dot_vec:-DDT_f64@-DNT_LAYOUT=128@-DNT=128u@-DNT_M1=127u@-DTXN=8u@-DTYN=16u \
  dot_coopmat_f32:dot_coopmat:-DDT_f32 f16_pack:f16_pack:-DDT_f32 \
  dot_coopmat_w8_f32:dot_coopmat:-DWM=2u@-DWN=4u@-DFR=4u@-DFC=2u@-DBK=32u \
  dot_coopmat_wide_f32:dot_coopmat:-DWM=2u@-DWN=4u@-DFR=4u@-DFC=4u@-DBK=16u \
  $(foreach d,$(DTYPES),iota_$(d):iota:-DDT_$(d)) \
  $(foreach d,f32 f64,random_$(d):random:-DDT_$(d)) \
  $(foreach d,f32 f64,peak_fma_$(d):peak_fma:-DDT_$(d) peak_fma_$(d)_vec4:peak_fma:-DDT_$(d)@-DVEC4 \
    peak_fma_$(d)_outer:peak_fma:-DDT_$(d)@-DOUTER) \
  $(foreach s,$(DTYPES),$(foreach d,$(DTYPES),copy_$(s)_$(d):copy:-DSRC_$(s)@-DDST_$(d)))

HAND_SPV = $(foreach v,$(HAND_VARIANTS),$(G)/spv/$(word 1,$(subst :, ,$(v))).spv)
ALL_SPV = $(EW_SPV) $(HAND_SPV)
GLSLFLAGS = -V --target-env vulkan1.1 -Ishaders/lib
# a shader that makes glslang balloon fails here instead of exhausting the machine
GLSLANG_LIMIT = ulimit -v 4194304;

.PHONY: all run test asan tsan install uninstall clean help shaders unit-tests
all: $(BIN)

help:
	@echo "make            build ./nxvk"
	@echo "make run        show the device (nxvk info) and compute a first result"
	@echo "make test       run the whole test suite (closes with 'N passed, N failed')"
	@echo "make asan       build ./nxvk-asan with AddressSanitizer + UBSan"
	@echo "make tsan       build ./nxvk-tsan with ThreadSanitizer"
	@echo "make install    install nxvk and man pages under PREFIX=$(PREFIX)"

$(G)/tools/%: tools/%.c src/ops/codegen.c src/core/util.c src/ops/elementwise.def src/ops/codegen.h src/ops/ew_desc.h
	@mkdir -p $(dir $@)
	$(CC) $(CSTD) -O1 $(WARN) -Isrc -o $@ $< $(if $(filter genshaders,$*),src/ops/codegen.c src/core/util.c,) -lm

$(G)/gen/comp/.stamp: $(G)/tools/genshaders $(GLSL_LIB)
	@mkdir -p $(dir $@)
	$(G)/tools/genshaders $(G)/gen/comp $(GLSL_LIB)
	@touch $@

$(G)/spv/ew_%.spv: $(G)/gen/comp/.stamp
	@mkdir -p $(dir $@)
	@$(GLSLANG_LIMIT) $(GLSLANG) $(GLSLFLAGS) -o $@ $(G)/gen/comp/ew_$*.comp >$@.log || (cat $@.log; rm -f $@; exit 1)

define HAND_RULE
$(G)/spv/$(word 1,$(subst :, ,$(1))).spv: shaders/$(word 2,$(subst :, ,$(1))).comp $(wildcard shaders/lib/*.glsl)
	@mkdir -p $$(dir $$@)
	@$(GLSLANG_LIMIT) $(GLSLANG) $(GLSLFLAGS) $(subst @, ,$(word 3,$(subst :, ,$(1)))) -o $$@ $$< >$$@.log || (cat $$@.log; rm -f $$@; exit 1)
endef
$(foreach v,$(HAND_VARIANTS),$(eval $(call HAND_RULE,$(v))))

shaders: $(ALL_SPV)

$(G)/gen/spirv_table.c: $(ALL_SPV) $(G)/tools/embed
	@mkdir -p $(dir $@)
	$(G)/tools/embed spirv $@ $(ALL_SPV)

$(G)/gen/glsl_lib.c: $(GLSL_LIB) $(G)/tools/embed
	@mkdir -p $(dir $@)
	$(G)/tools/embed text $@ nxvk_glsl_lib $(GLSL_LIB)

$(G)/gen/limits_json.c: conformance/limits.json $(G)/tools/embed
	@mkdir -p $(dir $@)
	$(G)/tools/embed text $@ nxvk_limits_json conformance/limits.json

$(G)/gen/edge_values_json.c: conformance/edge_values.json $(G)/tools/embed
	@mkdir -p $(dir $@)
	$(G)/tools/embed text $@ nxvk_edge_values_json conformance/edge_values.json

$(G)/gen/size_classes_json.c: conformance/size_classes.json $(G)/tools/embed
	@mkdir -p $(dir $@)
	$(G)/tools/embed text $@ nxvk_size_classes_json conformance/size_classes.json

# ---- C --------------------------------------------------------------------
$(B)/gen/%.o: $(G)/gen/%.c
	@mkdir -p $(dir $@)
	$(CC) $(CSTD) $(OPT) $(EXTRA_CFLAGS) -Isrc -c -o $@ $<

$(B)/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -MMD -MP -c -o $@ $<

-include $(shell find $(B) -name '*.d' 2>/dev/null)

$(BIN): $(OBJ_CORE) $(OBJ_CLI)
	$(CC) $(ALL_CFLAGS) -o $@ $^ $(ALL_LDFLAGS) $(LIBS)

# ---- sanitizers (separate object trees) -------------------------------------
asan:
	$(MAKE) FLAVOR=-asan OPT="-O1 -g" EXTRA_CFLAGS="-fsanitize=address,undefined,float-cast-overflow -fno-omit-frame-pointer -fno-sanitize-recover=all" \
	  EXTRA_LDFLAGS="-fsanitize=address,undefined,float-cast-overflow" nxvk-asan unit-tests

tsan:
	$(MAKE) FLAVOR=-tsan OPT="-O1 -g" EXTRA_CFLAGS="-fsanitize=thread" EXTRA_LDFLAGS="-fsanitize=thread" nxvk-tsan

# ---- running -----------------------------------------------------------------
run: nxvk
	./nxvk info
	@echo
	@echo '$$ ./nxvk run --op add --print '"'"'{"dtype":"f32","shape":[2,3],"data":[1,2,3,4,5,6]}'"'"' '"'"'{"dtype":"f32","shape":[3],"data":[10,20,"inf"]}'"'"
	@./nxvk run --op add --print '{"dtype":"f32","shape":[2,3],"data":[1,2,3,4,5,6]}' '{"dtype":"f32","shape":[3],"data":[10,20,"inf"]}'

UNIT_TESTS = $(patsubst tests/unit/%.c,$(G)/tests$(FLAVOR)/%,$(wildcard tests/unit/test_*.c))
$(G)/tests$(FLAVOR)/%: tests/unit/%.c $(OBJ_CORE)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -Itests/unit -Ishaders/lib -o $@ $< $(OBJ_CORE) $(ALL_LDFLAGS) $(LIBS)

# after UNIT_TESTS: a rule's prerequisites are expanded where it is read
unit-tests: $(UNIT_TESTS)

test: nxvk $(UNIT_TESTS)
	@tests/run.sh

install: nxvk
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/share/man/man1 $(DESTDIR)$(PREFIX)/share/man/man7
	install -m 755 nxvk $(DESTDIR)$(PREFIX)/bin/nxvk
	install -m 644 man/*.1 $(DESTDIR)$(PREFIX)/share/man/man1/
	if ls man/*.7 >/dev/null 2>&1; then install -m 644 man/*.7 $(DESTDIR)$(PREFIX)/share/man/man7/; fi

uninstall:
	rm -f $(DESTDIR)$(PREFIX)/bin/nxvk $(addprefix $(DESTDIR)$(PREFIX)/share/man/man1/,$(notdir $(wildcard man/*.1))) \
	  $(addprefix $(DESTDIR)$(PREFIX)/share/man/man7/,$(notdir $(wildcard man/*.7)))

clean:
	rm -rf build nxvk nxvk-asan nxvk-tsan
