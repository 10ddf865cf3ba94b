// The rules that merge the daemon's news into the page's state.
import { test } from "node:test";
import assert from "node:assert/strict";
import { applyCameraEvent, applyFrame, applyJob, applySnapshot, initialState, nextSlotAt, plannedFrames, reconnectDelay,
  runOnTarget, targetCameras } from "../../../Sources/Daemon/WebApp/Assets/model.js";

const job = (id, overrides = {}) => ({
  id, camera: "demo", cameras: ["demo"], state: "running", live: true, t0: "2026-11-29T10:00:00Z",
  plan: { intervalMs: 1000, frames: 10, exposure: { kind: "camera" } }, summary: { taken: 0, failed: 0, skipped: 0 }, ...overrides,
});

function snapshotState(jobs = []) {
  const state = initialState();
  applySnapshot(state, {
    nowUnixMs: 5000, cameras: [{ name: "demo", source: "demo", identity: {} }],
    status: { cameras: [{ name: "demo", status: { connection: "ready" } }] }, groups: [{ name: "rig", cameras: ["demo", "gone"] }],
    jobs, recentFrames: [],
  }, 4000);
  return state;
}

test("a snapshot replaces what the page knew and picks the first camera", () => {
  const state = snapshotState([job(1)]);
  assert.equal(state.live, "open");
  assert.equal(state.clockOffset, 1000);
  assert.equal(state.target, "camera:demo");
  assert.deepEqual(targetCameras(state), ["demo"]);
  state.target = "group:rig";
  assert.deepEqual(targetCameras(state), ["demo"], "a group's cameras the daemon does not hold are left out");
  assert.equal(runOnTarget(state, "timelapse").id, 1);
});

test("each frame counts once into its job, whatever the stream replays", () => {
  const state = snapshotState([job(1, { state: "waiting" })]);
  const frame = { run: 1, frame: 1, part: 1, outcome: "taken", latenessMicros: 300 };
  assert.equal(applyFrame(state, frame), true);
  assert.equal(applyFrame(state, { ...frame }), false);
  applyFrame(state, { run: 1, frame: 2, part: 1, outcome: "skipped", latenessMicros: 900 });
  const counted = state.jobs.get(1);
  assert.equal(counted.summary.taken, 1);
  assert.equal(counted.summary.skipped, 1);
  assert.equal(counted.summary.maxLatenessMicros, 900);
  assert.equal(counted.state, "running");
  assert.equal(counted.lastFrame.frame, 2);
});

test("a job document from before the snapshot does not take counts back, and an ended job stays ended", () => {
  const state = snapshotState([job(1, { summary: { taken: 5 } })]);
  applyJob(state, job(1, { summary: { taken: 3 } }));
  assert.equal(state.jobs.get(1).summary.taken, 5);
  applyJob(state, job(1, { live: false, state: "finished", summary: { taken: 10 } }));
  assert.equal(state.endedRun, 1, "the run shown stays on screen with its outcome");
  applyJob(state, job(1, { summary: { taken: 10 } }));
  assert.equal(state.jobs.get(1).live, false);
  applyJob(state, job(2, { live: false, state: "suspended" }));
  applyJob(state, job(2, { state: "running" }));
  assert.equal(state.jobs.get(2).live, true, "an interrupted run comes back when resumed");
});

test("an answer adds a job, or updates the state and next slot of one the stream told of", () => {
  const state = snapshotState([]);
  applyJob(state, job(2, { nextSlot: null }), true);
  assert.ok(state.jobs.has(2));
  applyJob(state, job(2, { state: "paused", nextSlot: null, summary: { taken: 0 } }), true);
  assert.equal(state.jobs.get(2).state, "paused");
  applyJob(state, job(2, { nextSlot: { frame: 3, at: "2026-11-29T10:00:03Z" } }), true);
  assert.equal(nextSlotAt(state.jobs.get(2)), Date.parse("2026-11-29T10:00:03Z"));
  assert.ok(Number.isNaN(nextSlotAt(job(3))));
});

test("only the newest 20 ended jobs are kept", () => {
  const state = snapshotState([]);
  for (let id = 1; id <= 30; id += 1) applyJob(state, job(id, { live: false, state: "finished" }));
  assert.equal(state.jobs.size, 20);
  assert.ok(!state.jobs.has(10) && state.jobs.has(11));
});

test("camera events change its status; a camera back or events lost asks for a read", () => {
  const state = snapshotState([]);
  assert.equal(applyCameraEvent(state, "battery", { camera: "demo", moduleBattery: 90, cameraBattery: 12 }, 0), null);
  assert.equal(state.cameras.get("demo").status.cameraBattery, 12);
  assert.equal(applyCameraEvent(state, "connection", { camera: "demo", connection: "ready" }, 0), "refresh");
  assert.equal(applyCameraEvent(state, "missedEvents", { camera: "demo" }, 0), "refresh");
  applyCameraEvent(state, "shotCompleted", { camera: "demo", counter: 7 }, 123);
  assert.deepEqual(state.lastShot, { counter: 7, cameraTime: undefined, at: 123 });
  assert.equal(applyCameraEvent(state, "battery", { camera: "unknown" }, 0), null);
});

test("the backoff doubles once per loss up to 10 s, with at most a fifth more of spread", () => {
  assert.deepEqual([1, 2, 3, 4, 5, 6].map((n) => reconnectDelay(n)), [1000, 2000, 4000, 8000, 10000, 10000]);
  assert.equal(reconnectDelay(1, 1), 1200);
});

test("a plan's frames come from its count or its duration", () => {
  assert.equal(plannedFrames({ frames: 5 }), 5);
  assert.equal(plannedFrames({ durationMs: 10500, intervalMs: 1000 }), 11);
  assert.equal(plannedFrames({ forever: true, intervalMs: 1000 }), null);
});
