import { test } from "node:test";
import assert from "node:assert/strict";
import { planPreview, readPlan, untilInstant } from "../../../Sources/Daemon/WebApp/Assets/plan.js";

const form = (overrides = {}) => ({
  interval: "2s", stop: "frames", frames: "300", duration: "1h", until: "", exposure: "camera", bulb: "1s",
  bracketCount: "3", bracketStep: "3", rampMinISO: "100", rampMaxISO: "6400", rampBulbFrom: "1s", rampGap: "2s", rampNight: "",
  overrun: "skip", delay: "0s", ...overrides,
});
const now = new Date(2026, 10, 29, 20, 0, 0).getTime();

test("the form reads as the API's plan, commas included", () => {
  const { plan, delay } = readPlan(form({ interval: "0,5s", delay: "10s" }), now, 0);
  assert.deepEqual(plan, { intervalMs: 500, overrun: "skip", frames: 300, exposure: { kind: "camera" } });
  assert.equal(delay, 10000);
  assert.equal(readPlan(form({ exposure: "bulb", bulb: "1,5s" }), now, 0).plan.exposure.ms, 1500);
});

test("each wrong field is named", () => {
  assert.match(readPlan(form({ interval: "2" }), now, 0).problem, /^Interval/);
  assert.match(readPlan(form({ frames: "2.5" }), now, 0).problem, /^Frames/);
  assert.match(readPlan(form({ stop: "duration", duration: "soon" }), now, 0).problem, /^Duration/);
  assert.match(readPlan(form({ stop: "until", until: "25:00" }), now, 0).problem, /^End time/);
  assert.match(readPlan(form({ delay: "-1s" }), now, 0).problem, /^Delay/);
  assert.match(readPlan(form({ exposure: "ramp", rampBulbFrom: "x" }), now, 0).problem, /^Bulb from/);
});

test("a time of day is the phone's next one, as an instant on the daemon's clock", () => {
  assert.equal(Date.parse(untilInstant("21:30", now, 0)) - now, 90 * 60000);
  assert.equal(Date.parse(untilInstant("19:00", now, 0)) - now, 23 * 3600000, "a time already past is tomorrow's");
  assert.equal(Date.parse(untilInstant("21:30", now, 5000)) - now, 90 * 60000 + 5000);
  assert.equal(readPlan(form({ delay: "20:01" }), now, 7777).delay, 60000, "the wait is the same on any clock");
});

test("the preview says frames, time and the clip", () => {
  const { plan } = readPlan(form({ frames: "250" }), now, 0);
  assert.equal(planPreview(plan, 0), "250 frames every 2 s: 8 min 20 s, a 10 s clip at 25 fps.");
  const bracket = readPlan(form({ stop: "forever", exposure: "bracket" }), now, 0).plan;
  assert.equal(planPreview(bracket, 0), "Every 2 s (3 pictures each) until stopped.");
});
