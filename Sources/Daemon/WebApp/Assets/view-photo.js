// Photo mode: the meter against the exposure set, the trigger (shoot, bulb, close, extra frame),
// focus, and the last shot.
import { $, el, renderMessage, setAttribute, setHidden, setText } from "./dom.js";
import { exposureEV100, meterOffset } from "./exposure.js";
import { formatClock, formatStops, stopsOf } from "./format.js";
import { parseFieldDuration } from "./grammar.js";
import { runOnTarget, settingValue, shownCamera } from "./model.js";
import { setRing, untilNextSecond } from "./clock.js";
import { mountLastPicture } from "./view-picture.js";

/** The meter's scale, in stops either side of the exposure set. */
const SCALE = 3;

/** What the trigger does now: close a bulb, add a frame to a run, or shoot. */
export function triggerMeaning(state) {
  if (runOnTarget(state, "photo-bulb") || state.directBulb) return "close";
  if (runOnTarget(state, "timelapse")) return "extra";
  return state.photoBulb ? "bulb" : "shoot";
}

/** The meter as the photographer reads it: how far the exposure set is over or under the
 *  camera's meter, in stops; the meter alone (EV at ISO 100) when the exposure is not known. */
export function meterReading(state, bulbText) {
  const name = shownCamera(state);
  const status = (name && state.cameras.get(name) && state.cameras.get(name).status) || {};
  const metered = stopsOf(status.meteredEV);
  if (metered === null) return { offset: null, text: "–", words: "no meter reading", label: "no reading" };
  const shutter = settingValue(state, name, "shutter-speed");
  const bulbMs = state.photoBulb || shutter === "bulb" ? parseFieldDuration(bulbText, 1000) : NaN;
  const set = exposureEV100({
    shutter, aperture: settingValue(state, name, "aperture"), iso: settingValue(state, name, "iso"),
    bulbSeconds: isFinite(bulbMs) && bulbMs > 0 ? bulbMs / 1000 : undefined,
  });
  const offset = meterOffset(metered, set);
  if (offset === null) {
    return { offset: null, text: `EV ${status.meteredEV}`, words: "metered at ISO 100; the exposure set is not known", label: `metered EV ${status.meteredEV} at ISO 100` };
  }
  const text = formatStops(offset);
  const words = text === "0" ? "on the meter" : offset > 0 ? "over the meter" : "under the meter";
  return { offset, text, words, label: `${text === "0" ? "" : `${text} stops `}${words}` };
}

export function mountPhoto({ store, actions }) {
  // Bulb lengths a night photographer reaches for, one tap each; any other is typed.
  $("bulb-presets").replaceChildren(...[1, 2, 4, 8, 15, 30, 60, 120, 240].map((seconds) => el("button", {
    type: "button", "data-needs": "shoot", "data-seconds": String(seconds), text: seconds < 60 ? `${seconds}s` : `${seconds / 60}m`,
    onclick: () => { $("bulb-seconds").value = String(seconds); store.update(); },
  })));
  $("bulb-seconds").addEventListener("input", () => store.update());
  $("photo-single").addEventListener("click", () => store.update((state) => { state.photoBulb = false; }));
  $("photo-bulb").addEventListener("click", () => store.update((state) => { state.photoBulb = true; }));
  let meaningChangedAt = 0;
  $("trigger").addEventListener("click", () => {
    // A second tap of a double tap lands on a trigger that has just changed what it does.
    if (Date.now() - meaningChangedAt < 600 && $("trigger").dataset.meaning === "close") return;
    actions.trigger($("bulb-seconds").value);
  });
  $("half-press").addEventListener("click", () => actions.focus());
  const picture = mountLastPicture($("photo-picture"));

  return function render(state) {
    if (state.view !== "photo") return Infinity;
    const reading = meterReading(state, $("bulb-seconds").value);
    setText($("ev-offset"), reading.text);
    setText($("ev-words"), reading.words);
    const needle = $("ev-needle");
    setHidden(needle, reading.offset === null);
    if (reading.offset !== null) {
      const clamped = Math.min(SCALE, Math.max(-SCALE, reading.offset));
      needle.style.left = `${((clamped + SCALE) / (2 * SCALE)) * 100}%`;
      needle.classList.toggle("beyond", Math.abs(reading.offset) > SCALE);
      setAttribute($("evmeter"), "aria-valuenow", String(Math.round(clamped * 3) / 3));
    } else {
      setAttribute($("evmeter"), "aria-valuenow", null);
    }
    setAttribute($("evmeter"), "aria-valuetext", reading.label);

    const meaning = triggerMeaning(state);
    const trigger = $("trigger");
    if (trigger.dataset.meaning !== meaning) { trigger.dataset.meaning = meaning; meaningChangedAt = Date.now(); }
    const run = runOnTarget(state, "timelapse");
    const [label, aria] = {
      close: ["Close", "Close the shutter now"],
      extra: ["Extra", `Extra frame in job ${run ? run.id : ""}`],
      bulb: [state.busyShooting ? "…" : "Bulb", "Open the shutter in bulb"],
      shoot: [state.busyShooting ? "…" : "Shoot", "Shoot"],
    }[meaning];
    setText($("trigger-label"), label);
    setAttribute(trigger, "aria-label", aria);
    setAttribute($("photo-single"), "aria-pressed", String(!state.photoBulb));
    setAttribute($("photo-bulb"), "aria-pressed", String(state.photoBulb));
    setHidden($("bulb-options"), !state.photoBulb);
    const bulbMs = parseFieldDuration($("bulb-seconds").value, 1000);
    for (const button of $("bulb-presets").children) setAttribute(button, "aria-pressed", String(Number(button.dataset.seconds) * 1000 === bulbMs));
    const spinning = state.busyShooting && meaning !== "close";
    $("trigger-ring").classList.toggle("spinning", spinning);
    if (spinning) $("trigger-ring").style.strokeDashoffset = "";

    const shot = state.lastShot;
    setText($("shot-counter"), shot ? `#${shot.counter}` : "–");
    setText($("shot-detail"), shot && shot.latencyMs !== undefined ? `${shot.latencyMs.toFixed(0)} ms from the press` : "");
    const name = shownCamera(state);
    setText($("photo-settings"), ["shutter-speed", "aperture", "iso"].map((n) => {
      const value = settingValue(state, name, n);
      return value && (n === "iso" ? `ISO ${value}` : value);
    }).filter(Boolean).join(" · "));
    setText($("half-press"), state.focusHeld ? "Let go" : "Focus");
    renderMessage($("photo-message"), state.messages.photo);
    picture(state);

    // The bulb's clock and ring, while it is open.
    const bulb = runOnTarget(state, "photo-bulb");
    const direct = state.directBulb;
    if ((bulb && bulb.t0) || direct) {
      const now = Date.now();
      const open = Math.max(0, direct ? now - direct.opened : now + state.clockOffset - Date.parse(bulb.t0));
      const length = direct ? direct.ms : bulb.plan.exposure.ms;
      setText($("trigger-state"), `${formatClock(open)} / ${formatClock(length)}`);
      setRing($("trigger-ring"), 1 - Math.min(1, open / length));
      return untilNextSecond(open);
    }
    if (!spinning) {
      setText($("trigger-state"), "");
      setRing($("trigger-ring"), 1);
    }
    return Infinity;
  };
}
