# The README's two commands: `make demo` and `make test`. Both set up the machine first.
SHELL := /bin/bash
ifneq ($(wildcard /opt/swift/usr/bin/swift),)
export PATH := /opt/swift/usr/bin:$(PATH)
endif

# check-long fuzzes each target this long, two at a time (one a core).
FUZZ_SECONDS ?= 300
FUZZ_JOBS ?= 2

# The test targets (and suites) of pure computation, run apart from the rest (see `test`).
COMPUTE_TESTS := JSONTests CameraProtocolsTests FuzzCorpusTests UnleashedProtocolTests UnleashedAPITests DaemonTests.ConfigurationFuzzTests
# The suites that open a library waiting with select() in the test process, run apart too.
SELECT_TESTS := GPhoto2Tests MQTTClientTests MQTTBridgeTests FleetTests DoctorBrokerTests

# Release builds link the Swift runtime and Foundation into each program: a command then starts in
# about half the time (no shared libraries to load and bind; docs/performance.md, "Command start").
# Every release build uses the same flags, so that one build serves them all.
RELEASE := -c release --static-swift-stdlib

# The benchmarks are a package of their own (Benchmarks/Package.swift), so that the test build
# compiles none of them. It builds the programs they drive (unleashed, unleashed-sim) too, into
# the same directory, where each benchmark looks for them beside itself.
BENCH := swift build --package-path Benchmarks $(RELEASE)
BENCH_BIN := Benchmarks/.build/release

# Builds a benchmark with those flags and runs it: `swift run` does not take --static-swift-stdlib.
bench_run = $(BENCH) --product $(1) && $(BENCH_BIN)/$(1)

.PHONY: setup build demo test check-long vcamera release deb check-package man completions docs-generated counts counts-update screenshots bench-web vectors fuzz bench bench-timing bench-bluez bench-gphoto2 bench-daemon bench-soak bench-sync bench-fleet bench-ramp bench-faults leak-check clean

setup:
	scripts/setup

build: setup
	swift build

demo: build
	scripts/demo

# The steps that start processes carry a marker of this run (make's pid) in their environment,
# which their children inherit; scripts/check-leftovers then fails if any of them is still running.
test: TEST_RUN = make-test-$$PPID
test: setup
	@scripts/step --start
	scripts/step "vectors" python3 Protocol/tools/make_vectors.py --check
	scripts/step "version" scripts/check-version
	scripts/step "module boundaries" scripts/check-imports
	scripts/step "web app: unit tests (node)" node --test Tests/WebApp/unit/
	scripts/step "debug build with tests" swift build --build-tests
# Tests of pure computation (codecs over every input, property tests, the API documents checked by
# a Python script) run first, in a process of their own. Swift's concurrency pool has one thread a
# core: on two cores such a test holds one thread for seconds, and two hold both, and then the
# fakes that other tests run in their process (a bluetoothd, a module, an MQTT bridge) answer
# nothing for as long: a stall of 4.8 s was measured, and camera shots timed out at 10 s.
	scripts/step "swift tests: computation" env UNLEASHED_TEST_RUN=$(TEST_RUN) swift test --skip-build $(COMPUTE_TESTS:%=--filter %)
# Swift Testing starts every test at once unless told otherwise: on two cores, 750 tests starting
# their daemons, buses and Python mocks together starve each other for half a minute, long enough
# for the real-clock exchanges inside (a demo shot's 3 s answer limit) to time out. 32 at a time
# took 103 s where all at once took 93 to 98 s, on two cores.
	scripts/step "swift tests: the rest" env UNLEASHED_TEST_RUN=$(TEST_RUN) SWT_EXPERIMENTAL_MAXIMUM_PARALLELIZATION_WIDTH=32 swift test --skip-build $(SELECT_TESTS:%=--skip %) $(COMPUTE_TESTS:%=--skip %)
# libgphoto2 waits on its PTP/IP sockets with select(), which aborts the process on a descriptor
# past 1023, and libmosquitto's network loop waits with select() too, and never connects from
# one; the rest of the suite, in parallel, holds over a thousand at its peak (a fresh-clone run
# had every test of MQTTBridgeTests wait 60 s for a connection that never came). So the tests
# that open either library in the test process run in a process of their own.
	scripts/step "swift tests: libgphoto2 and libmosquitto" env UNLEASHED_TEST_RUN=$(TEST_RUN) swift test --skip-build $(SELECT_TESTS:%=--filter %)
	scripts/step "API contract (schemathesis)" env UNLEASHED_TEST_RUN=$(TEST_RUN) scripts/api-contract
# The browser tests' files two at a time (each file keeps its own daemon and phone): half of
# their time is a run's real intervals and a browser starting, which the other file fills.
	scripts/step "web app (chromium)" env UNLEASHED_TEST_RUN=$(TEST_RUN) scripts/web-test -n 2 --dist loadfile
	scripts/step "leftover processes" scripts/check-leftovers $(TEST_RUN)
	@scripts/step --table

# What make test leaves out for its time, run before a release (docs/testing.md): the counts of
# the release build under callgrind, the D-Bus layer under valgrind, every fuzz target for
# FUZZ_SECONDS, the API contract at ten times make test's depth, the web app's views held
# sideways, the package, and the CLI against libgphoto2's own virtual camera. Nothing here is
# skipped from make test's own steps: this adds to them.
check-long: TEST_RUN = make-check-long-$$PPID
check-long: setup
	@scripts/step --start "make check-long"
	scripts/step "debug build: unleashed" swift build --product unleashed
	scripts/step "release build: unleashed-sim" $(BENCH) --product unleashed-sim
	scripts/step "release build: unleashed-counts" $(BENCH) --product unleashed-counts
	scripts/step "counts (callgrind)" env UNLEASHED_TEST_RUN=$(TEST_RUN) $(BENCH_BIN)/unleashed-counts check
	scripts/step "leak check (valgrind)" env UNLEASHED_TEST_RUN=$(TEST_RUN) scripts/leak-check
	scripts/step "fuzz ($(FUZZ_SECONDS) s a target)" env UNLEASHED_TEST_RUN=$(TEST_RUN) FUZZ_JOBS=$(FUZZ_JOBS) scripts/fuzz $(FUZZ_SECONDS)
	scripts/step "API contract at depth (schemathesis)" env UNLEASHED_TEST_RUN=$(TEST_RUN) API_CONTRACT_EXAMPLES=300 scripts/api-contract
# make test runs the browser tests on an upright phone; the views' and the field's run here again
# with the phone held sideways (740x360), with axe on every view.
	scripts/step "web app held sideways (chromium)" env UNLEASHED_TEST_RUN=$(TEST_RUN) UNLEASHED_WEB_ORIENTATION=landscape scripts/web-test Tests/WebApp/test_views.py Tests/WebApp/test_field.py Tests/WebApp/test_accessibility.py
	scripts/step "package (make deb)" scripts/build-deb
	scripts/step "package installed in a clean root" scripts/check-package
# The built unleashed against libgphoto2's own virtual USB camera, in a libgphoto2 built from
# Debian's source with it (make vcamera; cached in .build/libgphoto2-vcamera). With
# UNLEASHED_VCAMERA set the suite fails, rather than skip, when that build is not there. swift
# test builds the tests first if make test has not.
	scripts/step "libgphoto2 with its virtual camera" scripts/build-libgphoto2-vcamera
	scripts/step "libgphoto2's virtual camera" env UNLEASHED_TEST_RUN=$(TEST_RUN) UNLEASHED_VCAMERA=.build/libgphoto2-vcamera swift test --filter VirtualCameraTests
	scripts/step "leftover processes" scripts/check-leftovers $(TEST_RUN)
	@scripts/step --table

# libgphoto2 from Debian's source package with its virtual camera (vusb), into
# .build/libgphoto2-vcamera: a second run only checks it is there. Never the system's libgphoto2:
# a process uses it through the environment the script writes beside it.
vcamera:
	scripts/build-libgphoto2-vcamera

# The command as the package installs it: a release build with the flags above. JOBS=N runs N
# compiler jobs instead of one a core (make deb JOBS=N too): fewer at once need less memory, for a
# small machine. swift build puts the number in the compiler's command lines (-j, -num-threads),
# so a build with JOBS other than the number of cores shares nothing with one without: leave it
# unset where there is memory enough.
release:
	swift build $(RELEASE) --product unleashed $(if $(JOBS),-j $(JOBS))

# The Debian package for this machine's architecture, into build/deb/, checked by lintian
# (scripts/build-deb; debian/rules does the build). The Swift toolchain must be on PATH.
deb:
	scripts/build-deb

# The package installed, used, removed and purged in a clean Debian 12 root made by debootstrap
# (scripts/check-package; as root, through sudo if need be). About a minute once debootstrap's downloads are
# cached in .build/debootstrap-cache, about 4 minutes more the first time. Part of make check-long.
check-package: deb
	scripts/check-package

# The manual pages and shell completions, made from the command's definitions by
# swift-argument-parser from the debug build, into .build/generated/{man,bash,zsh,fish} to read
# (`man -l .build/generated/man/unleashed.1`). They are not committed: the package build makes
# its own from the binary it installs, so they cannot go stale.
docs-generated:
	swift build --product unleashed
	scripts/generate-docs .build/debug/unleashed .build/generated
man completions: docs-generated

# Allocations and instructions per request (codec, in-process session, BlueZ over its sockets and over D-Bus messages), counted
# under valgrind and checked against Benchmarks/unleashed-counts/thresholds-<toolchain>.json.
# `make counts-update` records new thresholds, for a deliberate change.
counts: setup
	$(BENCH) --product unleashed-sim
	$(BENCH) --product unleashed-counts
	$(BENCH_BIN)/unleashed-counts check

counts-update: setup
	$(BENCH) --product unleashed-sim
	$(BENCH) --product unleashed-counts
	$(BENCH_BIN)/unleashed-counts check --update

# Regenerates Protocol/vectors from Protocol/tools/make_vectors.py (an implementation of
# PROTOCOL.md independent of the Swift codec).
vectors:
	python3 Protocol/tools/make_vectors.py

fuzz: setup
	FUZZ_JOBS=$(FUZZ_JOBS) scripts/fuzz $(FUZZ_SECONDS)

bench: setup
	$(call bench_run,unleashed-bench)

# Time-lapse timing: the engine beside a bare thread's floor, idle and with every core loaded by
# busy-loop processes, at the normal policy and at real-time priority; --naive adds a
# sleep-after-each-shot loop (docs/performance.md).
bench-timing: setup
	$(call bench_run,unleashed-timing-bench)

# The BlueZ path: request round trip, connect-to-ready and CPU per request through a private
# dbus-daemon and the fake bluetoothd, beside bleak (from PyPI, in a virtual environment made
# here) on the same fake and the in-process link (docs/performance.md).
BLEAK_VERSION = 3.1.0
bench-bluez: setup
	$(BENCH) --product unleashed-sim
	test -x .build/bench-venv/bin/python || python3 -m venv .build/bench-venv
	.build/bench-venv/bin/python -m pip install --quiet --disable-pip-version-check "bleak==$(BLEAK_VERSION)"
	$(call bench_run,unleashed-bluez-bench)

# Time-lapse timing over the libgphoto2 backend (the simulated PTP/IP camera, with and without
# downloads) beside the module backend, in one run (docs/performance.md).
bench-gphoto2: setup
	$(BENCH) --product unleashed-sim
	$(call bench_run,unleashed-gphoto2-bench)

# The daemon: status requests through its socket, `unleashed shoot` through it and direct, and
# its idle memory and CPU (docs/performance.md).
bench-daemon: setup
	$(BENCH) --product unleashed
	$(call bench_run,unleashed-daemon-bench)

# The daemon under a steady load for an hour (MINUTES=15 for less): a job of slots every 200 ms,
# 10 event followers and 5 status pollers; its memory, descriptors and threads sampled as it goes,
# and the slope of its memory once warmed up (docs/performance.md).
MINUTES ?= 60
bench-soak: setup
	$(BENCH) --product unleashed
	$(call bench_run,unleashed-daemon-bench) --soak --minutes $(MINUTES)

# A rig's synchronisation: the spread between the first and last shoot request of a slot at the
# D-Bus boundary, for 2, 4 and 8 simulated modules, the rig's volley beside a sequential loop
# (docs/performance.md).
bench-fleet: setup
	$(BENCH) --product unleashed
	$(call bench_run,unleashed-fleet-bench)

bench-sync: setup
	$(call bench_run,unleashed-sync-bench)

# Exposure ramps through a modelled sunset and sunrise: fixed, threshold, a PID rate ramp and the ramp engine.
bench-ramp: setup
	$(call bench_run,unleashed-ramp-bench)

# Recovery from lost packets: a 500 ms time-lapse on the demo link with no faults and with 5 % of
# packets dropped, the fixed 1 s wait before a request is sent again beside the timeout learned
# from the link's round trips, in one run (docs/performance.md).
bench-faults: setup
	$(call bench_run,unleashed-faults-bench)

# The D-Bus layer under valgrind: a 10,000-call soak that must lose no memory (docs/performance.md).
leak-check: setup
	scripts/leak-check

# The web app: its weight, a shot's way from the camera to the page, and a run's lateness with
# and without 20 pages following it (docs/performance.md).
bench-web: setup
	$(BENCH) --product unleashed
	Benchmarks/web-bench/bench-web

# The web app's screenshots in docs/screenshots, made by its browser tests at phone size.
screenshots: setup
	swift build --product unleashed
	UNLEASHED_SCREENSHOTS=$(CURDIR)/docs/screenshots scripts/web-test -k screenshots

clean:
	rm -rf .build .build-fuzz Benchmarks/.build
