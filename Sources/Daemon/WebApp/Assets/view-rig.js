// The rig across hosts: every host the daemon hears on its MQTT broker, slot by slot. The fleet
// is read once a second while the view is open (the broker's news reaches the daemon, not the
// page); each host's card is kept and brought up to date, not rebuilt.
import { $, el, reconcile, setAttribute, setText } from "./dom.js";

/** A slot's mark: taken when every camera of the host took it; its counts in words for screen readers. */
function slotMark(slot) {
  const outcome = slot.failed ? "failed" : slot.skipped ? "skipped" : "taken";
  const words = [slot.taken && `${slot.taken} taken`, slot.failed && `${slot.failed} failed`, slot.skipped && `${slot.skipped} skipped`].filter(Boolean).join(", ");
  return { outcome, words, text: outcome === "taken" ? String(slot.slot) : `${slot.slot}${outcome === "failed" ? "✗" : "–"}` };
}

/** The fleet's one-line summary. */
export function fleetSummary(fleet) {
  if (!fleet.enabled) return "This daemon has no MQTT broker: set [mqtt] broker in its configuration to see every host of a rig here (docs/mqtt.md).";
  const online = fleet.hosts.filter((host) => host.online).length;
  const rig = !fleet.rig ? "no time-lapse running"
    : fleet.rig.lowestSlot === fleet.rig.highestSlot ? `every running host at slot ${fleet.rig.lowestSlot}`
    : `hosts at slots ${fleet.rig.lowestSlot} to ${fleet.rig.highestSlot}`;
  return `${fleet.connected ? "" : "Not connected to the broker; as last heard. "}${fleet.hosts.length} host${fleet.hosts.length === 1 ? "" : "s"}, ${online} online · ${rig}`;
}

export function hostClock(host) {
  if (!host.clock) return "clock unknown";
  return host.clock.synchronised ? `clock ±${host.clock.estimatedErrorMs.toFixed(1)} ms` : `clock NOT synchronised (estimate ${Math.round(host.clock.estimatedErrorMs)} ms)`;
}

export function mountRig() {
  const createHost = () => el("li", {},
    el("div", { className: "title" }, el("span", {}), el("span", {})),
    el("div", { className: "muted small" }), el("div", { className: "small" }), el("div", { className: "jobs" }));
  const createJob = () => el("div", { className: "job" }, el("div", { className: "small" }), el("ol", { className: "slots" }));
  const createSlot = () => el("li", {});
  return function render(state) {
    if (state.view !== "rig") return Infinity;
    const fleet = state.fleet;
    setText($("rig-summary"), state.fleetProblem || (fleet ? fleetSummary(fleet) : "Reading the fleet…"));
    const hosts = fleet && fleet.enabled ? fleet.hosts : [];
    reconcile($("rig-hosts"), hosts, (host) => host.node, createHost, (node, host) => {
      node.dataset.node = host.node;
      const [title, clock, cameras, jobs] = node.children;
      setText(title.children[0], `${host.node}${host.node === fleet.node ? " (this host)" : ""}`);
      setText(title.children[1], host.online ? "online" : "offline");
      title.children[1].className = host.online ? "" : "muted";
      setText(clock, hostClock(host));
      setText(cameras, host.cameras.map((camera) => `${camera.name} ${camera.connection || "?"}${camera.running ? `, ${camera.frames} frames` : ""}`).join(" · ") || "no camera");
      reconcile(jobs, host.jobs, (job) => job.id, createJob, (jobNode, job) => {
        jobNode.dataset.job = String(job.id);
        const [line, slots] = jobNode.children;
        setText(line, `Job ${job.id} ${job.state} · ${job.camera} · slot ${job.slot}: ${job.taken} taken, ${job.failed} failed, ${job.skipped} skipped`);
        setAttribute(slots, "aria-label", `Job ${job.id}'s latest slots`);
        slots.hidden = !job.recent.length;
        reconcile(slots, job.recent, (slot) => slot.slot, createSlot, (slotNode, slot) => {
          const mark = slotMark(slot);
          slotNode.className = mark.outcome;
          slotNode.dataset.slot = String(slot.slot);
          setAttribute(slotNode, "title", `slot ${slot.slot}: ${mark.words}`);
          setAttribute(slotNode, "aria-label", `slot ${slot.slot}: ${mark.words}`);
          setText(slotNode, mark.text);
        });
      });
    });
    return Infinity;
  };
}
