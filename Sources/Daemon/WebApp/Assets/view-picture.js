// The last picture the camera's backend saved (libgphoto2 downloads them), with its luminance
// histogram: in Photo after a shot, and beside a running time-lapse's clock.
import { setAttribute, setHidden } from "./dom.js";
import { camerasPath } from "./api.js";
import { shownCamera } from "./model.js";
import { barHeights, histogramWords, luminanceHistogram } from "./histogram.js";

/** The newest saved picture of the shown camera, or null where the backend saves none. */
export function lastPicture(state) {
  const camera = shownCamera(state);
  if (!camera || state.pictures.camera !== camera || !state.pictures.list.length) return null;
  const picture = state.pictures.list[0];
  return { camera, picture, src: camerasPath(camera, `/pictures/${encodeURIComponent(picture.name)}/thumbnail`) };
}

/** Draws the histogram of a loaded thumbnail into `canvas`, and says it in words. */
function drawHistogram(image, canvas) {
  const scratch = document.createElement("canvas");
  scratch.width = image.naturalWidth;
  scratch.height = image.naturalHeight;
  const context = scratch.getContext("2d", { willReadFrequently: true });
  context.drawImage(image, 0, 0);
  const counts = luminanceHistogram(context.getImageData(0, 0, scratch.width, scratch.height).data, 64);
  const bars = barHeights(counts, canvas.height);
  const draw = canvas.getContext("2d");
  draw.clearRect(0, 0, canvas.width, canvas.height);
  draw.fillStyle = getComputedStyle(canvas).color;
  const width = canvas.width / counts.length;
  bars.forEach((height, bin) => draw.fillRect(bin * width, canvas.height - height, Math.max(1, width - 1), height));
  canvas.dataset.pixels = String(counts.reduce((sum, count) => sum + count, 0));
  setAttribute(canvas, "aria-label", `Histogram: ${histogramWords(counts)}`);
}

/** Keeps a figure (an img, a canvas, a caption) showing the last picture. */
export function mountLastPicture(figure) {
  const [image, canvas, caption] = [figure.querySelector("img"), figure.querySelector("canvas"), figure.querySelector("figcaption")];
  image.addEventListener("load", () => drawHistogram(image, canvas));
  return function render(state) {
    const last = lastPicture(state);
    setHidden(figure, !last);
    if (!last) return;
    if (image.getAttribute("src") !== last.src) {
      delete canvas.dataset.pixels;
      image.setAttribute("src", last.src);
      setAttribute(image, "alt", `The last picture: ${last.picture.name}`);
    }
    const text = `${last.picture.name}${last.picture.frame ? ` · frame ${last.picture.frame}` : ""}`;
    if (caption.textContent !== text) caption.textContent = text;
  };
}
