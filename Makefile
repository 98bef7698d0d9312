# dperm: PGXS build of a C++17 extension (pgvector-style Makefile).
EXTENSION = dperm
MODULE_big = dperm
EXTVERSION = $(shell sed -n "s/^default_version = '\\(.*\\)'/\\1/p" $(EXTENSION).control)
# pgvector's layout: sql/ holds the install and upgrade scripts. Two are
# built: the complete script of the current version from sql/dperm.sql, and
# the upgrade to it from sql/upgrade/dperm--<previous>--<current>.sql.in, each
# through sql/gen_sql, which writes what the core's tables generate (dp_options
# from the option table, the loss names) in place of the source's markers, as
# Citus #includes one udfs/<fn>/latest.sql into both. The 0.1.0 script and the
# released upgrades are kept as they shipped (CREATE EXTENSION ... VERSION
# '0.1.0' and ALTER EXTENSION UPDATE replay them; test/upgrade.sh checks both
# routes give one catalog).
SQL_UPGRADES_BUILT = $(patsubst sql/upgrade/%.in,sql/%,$(wildcard sql/upgrade/$(EXTENSION)--*.sql.in))
DATA_built = sql/$(EXTENSION)--$(EXTVERSION).sql $(SQL_UPGRADES_BUILT)
DATA = $(filter-out $(DATA_built),$(wildcard sql/$(EXTENSION)--*.sql))

# The core is in folders by concept (src/core/<concept>/*.cpp, headers in
# include/dperm/<concept>/), one level deep.
CORE_SRCS = $(sort $(wildcard src/core/*.cpp src/core/*/*.cpp))
PG_SRCS = $(sort $(wildcard src/pg/*.cpp src/pg/*/*.cpp))
CORE_OBJS = $(CORE_SRCS:.cpp=.o)
OBJS = $(CORE_OBJS) $(PG_SRCS:.cpp=.o)

# pg_regress schedule: every test/sql/X.sql (expected output in
# test/expected/X.out), in name order (each file sets up what it needs, so
# no file depends on another having run).
REGRESS = $(sort $(basename $(notdir $(wildcard test/sql/*.sql))))
REGRESS_OPTS = --inputdir=test --load-extension=dperm

EIGEN_CFLAGS ?= -I/usr/include/eigen3
WARN = -Wall -Wextra $(if $(filter 1,$(DPERM_WERROR)),-Werror)
PG_CPPFLAGS = -Iinclude -Isrc/pg $(EIGEN_CFLAGS)
PG_CXXFLAGS = -std=c++17 -O2 -fPIC -MMD -MP $(WARN)
SHLIB_LINK = -lstdc++ -lm
EXTRA_CLEAN = src/core/*.d src/core/*/*.d src/pg/*.d src/pg/*/*.d test/unit/*.o test/unit/*.d test/unit/run_unit_tests sql/gen_sql sql/gen_sql.o sql/gen_sql.d results regression.diffs regression.out

# No LLVM bitcode: JIT inlining of C++ is of no use here, and the bitcode
# rule would not see the C++ flags.
override with_llvm = no

PG_CONFIG ?= pg_config
PGXS := $(shell $(PG_CONFIG) --pgxs)
include $(PGXS)

# DPERM_FAST_BUILD=1 (scripts/test.sh): line tables only (-g1) instead of
# full debug information, which costs ~40% of the compile time of a file
# that includes Eigen; backtraces keep file and line.
ifeq ($(DPERM_FAST_BUILD),1)
override CXXFLAGS := $(patsubst -g,-g1,$(CXXFLAGS))
endif

# The core never sees PostgreSQL's headers: its objects compile without the
# server include directory, so an #include "postgres.h" there fails.
$(CORE_OBJS): override CPPFLAGS := -Iinclude $(EIGEN_CFLAGS)

# PostgreSQL's headers are system headers for our warnings (they trip
# -Wextra and -Wregister under C++17).
PG_OBJS = $(PG_SRCS:.cpp=.o)
$(PG_OBJS): override CPPFLAGS := $(patsubst -I$(includedir_server),-isystem $(includedir_server),$(CPPFLAGS))

# GoogleTest unit tests of the core, no server needed.
UNIT_SRCS = $(sort $(wildcard test/unit/*.cpp))
UNIT_OBJS = $(UNIT_SRCS:.cpp=.o)
$(UNIT_OBJS): override CPPFLAGS := -Iinclude $(EIGEN_CFLAGS)
test/unit/run_unit_tests: $(UNIT_OBJS) $(CORE_OBJS)
	$(CXX) -o $@ $^ -lgtest -lgtest_main -pthread

.PHONY: unit core-guard check-includes check-paths bench-check
unit: test/unit/run_unit_tests
	DPERM_SHARED=$(or $(DPERM_SHARED),../shared) ./test/unit/run_unit_tests

# Proves the fence: a core file that includes postgres.h must not compile.
core-guard:
	bash test/core_guard.sh

# No include cycle between the core's modules (header + same-named .cpp).
check-includes:
	bash test/check_includes.sh

# Every repository path a comment, doc or message names exists.
check-paths:
	bash test/check_paths.sh

# The bench programs (compiled by their scripts against the core's objects)
# still compile, and include no test code: test/unit may include bench/lib,
# never the reverse.
BENCH_SRCS = $(sort $(wildcard bench/*.cpp bench/*/*.cpp bench/*/*/*.cpp))
bench-check:
	@! grep -n '#include.*test/' $(BENCH_SRCS) $(wildcard bench/lib/*.hpp) || { echo "bench includes test code"; exit 1; }
	@for f in $(BENCH_SRCS); do $(CXX) -std=c++17 -fsyntax-only $(WARN) -Iinclude $(EIGEN_CFLAGS) $$f || exit 1; done
	@echo "bench-check: ok ($(words $(BENCH_SRCS)) programs)"

# The SQL scripts' preprocessor (sql/gen_sql.cpp): a host program on the
# core's objects, run by the build, never installed.
sql/gen_sql.o: override CPPFLAGS := -Iinclude $(EIGEN_CFLAGS)
sql/gen_sql: sql/gen_sql.o $(CORE_OBJS)
	$(CXX) -o $@ $^

GEN_SQL = sql/gen_sql $< > $@.tmp && mv $@.tmp $@ || { rm -f $@.tmp; exit 1; }
# The scripts are kept as parts by topic (@INCLUDE lines): sql/install/ for
# the complete script, sql/upgrade/<from>--<to>/ for an upgrade's.
sql/$(EXTENSION)--$(EXTVERSION).sql: sql/$(EXTENSION).sql $(wildcard sql/install/*.sql) sql/gen_sql
	$(GEN_SQL)
$(SQL_UPGRADES_BUILT): sql/%: sql/upgrade/%.in $(wildcard sql/upgrade/*/*.sql sql/install/*.sql) sql/gen_sql
	$(GEN_SQL)

-include $(wildcard src/core/*.d src/core/*/*.d src/pg/*.d src/pg/*/*.d test/unit/*.d sql/gen_sql.d)
