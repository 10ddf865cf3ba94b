// A time-lapse's form as the API's plan: what the photographer typed, read with the CLI's
// grammar, and the one-line preview of what it will make. Pure: the form's values come in as
// strings, the clocks as numbers.
import { parseDuration, parseTimeOfDay } from "./grammar.js";
import { formatDuration } from "./format.js";
import { plannedFrames } from "./model.js";

/** The next time the phone's clock shows `hh:mm[:ss]` after `phoneNow`, as an instant on the
 *  daemon's clock: the photographer means the phone's time of day, whatever zone the daemon keeps. */
export function untilInstant(text, phoneNow, clockOffset) {
  const [hours, minutes, seconds] = parseTimeOfDay(text);
  const end = new Date(phoneNow);
  end.setHours(hours, minutes, seconds || 0, 0);
  if (end.getTime() <= phoneNow) end.setDate(end.getDate() + 1);
  return new Date(end.getTime() + clockOffset).toISOString();
}

const positive = (ms) => isFinite(ms) && ms > 0;

/**
 * The plan as the API takes it and the wait before it starts, or `{ problem }` naming the field
 * that is wrong. `form` holds the fields' texts and the chosen kinds (stop, exposure, overrun).
 */
export function readPlan(form, phoneNow, clockOffset) {
  const intervalMs = parseDuration(form.interval);
  if (!positive(intervalMs)) return { problem: "Interval: write it like 2s, 0,5s or 1m." };
  const plan = { intervalMs, overrun: form.overrun || "skip" };
  switch (form.stop) {
    case "frames": {
      const frames = Number(String(form.frames).trim());
      if (!(Number.isInteger(frames) && frames >= 1)) return { problem: "Frames: a whole number, at least 1." };
      plan.frames = frames;
      break;
    }
    case "duration": {
      const durationMs = parseDuration(form.duration);
      if (!positive(durationMs)) return { problem: "Duration: write it like 90m or 1h30m." };
      plan.durationMs = durationMs;
      break;
    }
    case "until":
      if (!parseTimeOfDay(form.until)) return { problem: "End time: pick a time of day." };
      plan.until = untilInstant(form.until, phoneNow, clockOffset);
      break;
    default: plan.forever = true;
  }
  switch (form.exposure) {
    case "bulb": {
      const ms = parseDuration(form.bulb);
      if (!positive(ms)) return { problem: "Bulb: write it like 1s, 0,8s or 800ms." };
      plan.exposure = { kind: "bulb", ms };
      break;
    }
    case "bracket":
      plan.exposure = { kind: "bracket", count: parseInt(form.bracketCount, 10), stepThirds: parseInt(form.bracketStep, 10) };
      break;
    case "ramp": {
      const ramp = { kind: "ramp", minISO: parseInt(form.rampMinISO, 10), maxISO: parseInt(form.rampMaxISO, 10) };
      const bulbFrom = String(form.rampBulbFrom || "").trim();
      ramp.bulbFromMs = bulbFrom === "" || bulbFrom === "never" ? null : parseDuration(bulbFrom);
      if (ramp.bulbFromMs !== null && !isFinite(ramp.bulbFromMs)) return { problem: "Bulb from: write it like 1s, or leave it empty for never." };
      const gap = parseDuration(form.rampGap);
      if (isFinite(gap)) ramp.gapMs = gap;
      const night = String(form.rampNight || "").trim();
      if (night) {
        ramp.nightIntervalMs = parseDuration(night);
        if (!isFinite(ramp.nightIntervalMs)) return { problem: "Night interval: write it like 30s, or leave it empty." };
      }
      plan.exposure = ramp;
      break;
    }
    default: plan.exposure = { kind: "camera" };
  }
  const start = String(form.delay || "").trim() || "0";
  // A time of day is the phone's; the wait until then is the same on any clock.
  const delay = parseTimeOfDay(start) ? Date.parse(untilInstant(start, phoneNow, 0)) - phoneNow : parseDuration(start);
  if (!isFinite(delay) || delay < 0) return { problem: "Delay or time: write a wait like 10s, or a time of day like 21:30." };
  return { plan, delay };
}

/** What the plan will make, in one line: frames, time, and the clip at 25 fps. */
export function planPreview(plan, clockOffset) {
  const frames = plannedFrames(plan);
  const pictures = plan.exposure.kind === "bracket" ? ` (${plan.exposure.count} pictures each)` : "";
  if (frames) {
    return `${frames} frames${pictures} every ${formatDuration(plan.intervalMs)}: ${formatDuration(frames * plan.intervalMs)}, a ${formatDuration((frames / 25) * 1000)} clip at 25 fps.`;
  }
  const end = plan.until ? new Date(Date.parse(plan.until) - clockOffset).toLocaleString() : "stopped";
  return `Every ${formatDuration(plan.intervalMs)}${pictures} until ${end}.`;
}
