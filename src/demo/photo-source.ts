import type { PhotoRecord, PhotoSource } from '../modules/photos/photo-source.ts';
import { renderSeedForKey } from './market/market.ts';
import { Rng } from './market/random.ts';

/**
 * The demo market's photos: an SVG scene drawn from the photo's `render_seed`
 * at the photo's own width × height — a room, a facade or a skyline, chosen by
 * the caption, with seeded colours and furniture, and the caption written on it.
 * Everything is a pure function of the photo row, so a key always renders to
 * the same image; the text is marked as synthetic so nobody mistakes it for a
 * real apartment.
 *
 * Text goes through the host's fonts (fontconfig): bytes are identical for a
 * key on one host, and may differ between hosts with different font sets.
 */
export class DemoPhotoSource implements PhotoSource {
  /** Bump when the drawing changes: cached variants of the old drawing are then ignored. */
  readonly id = 'demo-svg-2';

  async sourceImage(photo: PhotoRecord): Promise<Buffer> {
    return Buffer.from(demoPhotoSvg(photo), 'utf8');
  }
}

export type Scene =
  | 'living'
  | 'bedroom'
  | 'kitchen'
  | 'bathroom'
  | 'dining'
  | 'closet'
  | 'lobby'
  | 'facade'
  | 'street'
  | 'entrance'
  | 'plan'
  | 'view';

/**
 * What each caption the demo writes shows (lower case). Every caption kind has
 * its own scene, so an "Exterior" is never a room and a "Floor plan" is a plan;
 * only an uncaptioned photo falls back to a seeded interior.
 */
export const SCENES: Readonly<Record<string, Scene>> = {
  'living room': 'living',
  bedroom: 'bedroom',
  'sleeping area': 'bedroom',
  kitchen: 'kitchen',
  bathroom: 'bathroom',
  'dining area': 'dining',
  closet: 'closet',
  lobby: 'lobby',
  facade: 'facade',
  exterior: 'facade',
  'street view': 'street',
  entrance: 'entrance',
  'floor plan': 'plan',
  view: 'view',
  'roof deck': 'view',
};

const INTERIORS: readonly Scene[] = ['living', 'bedroom', 'kitchen', 'dining'];

/** The scene a caption names; undefined for no caption or one the demo never writes. */
export function sceneForCaption(caption: string | null): Scene | undefined {
  return caption ? SCENES[caption.trim().toLowerCase()] : undefined;
}

function sceneOf(photo: PhotoRecord, rng: Rng): Scene {
  return sceneForCaption(photo.caption) ?? rng.pick(INTERIORS);
}

/** The SVG document of a demo photo; exported for tests and for operators previewing the drawing. */
export function demoPhotoSvg(photo: PhotoRecord): string {
  const rng = new Rng('demo-photo', photo.renderSeed ?? renderSeedForKey(photo.key));
  const canvas = new Canvas(photo.width, photo.height);
  const scene = sceneOf(photo, rng);
  if (scene === 'facade') drawFacade(canvas, rng);
  else if (scene === 'street') drawStreet(canvas, rng);
  else if (scene === 'entrance') drawEntrance(canvas, rng);
  else if (scene === 'plan') drawPlan(canvas, rng);
  else if (scene === 'view') drawSkyline(canvas, rng, photo.caption?.toLowerCase().includes('roof') ?? false);
  else drawRoom(canvas, rng, scene);
  drawCaption(canvas, photo.caption);
  return canvas.toSvg();
}

/** Collects SVG elements; coordinates are rounded to 0.1 px so the text is stable and compact. */
class Canvas {
  readonly parts: string[] = [];
  readonly defs: string[] = [];
  private ids = 0;
  constructor(
    readonly w: number,
    readonly h: number,
  ) {}

  id(prefix: string): string {
    this.ids += 1;
    return `${prefix}${this.ids}`;
  }

  rect(x: number, y: number, w: number, h: number, fill: string, extra = ''): void {
    this.parts.push(
      `<rect x="${n(x)}" y="${n(y)}" width="${n(Math.max(0, w))}" height="${n(Math.max(0, h))}" fill="${fill}"${extra}/>`,
    );
  }

  poly(points: readonly (readonly [number, number])[], fill: string, extra = ''): void {
    const list = points.map(([x, y]) => `${n(x)},${n(y)}`).join(' ');
    this.parts.push(`<polygon points="${list}" fill="${fill}"${extra}/>`);
  }

  ellipse(cx: number, cy: number, rx: number, ry: number, fill: string, extra = ''): void {
    this.parts.push(
      `<ellipse cx="${n(cx)}" cy="${n(cy)}" rx="${n(rx)}" ry="${n(ry)}" fill="${fill}"${extra}/>`,
    );
  }

  /** A vertical gradient; returns its `url(#…)` paint. */
  vertical(top: string, bottom: string): string {
    const id = this.id('g');
    this.defs.push(
      `<linearGradient id="${id}" x1="0" y1="0" x2="0" y2="1"><stop offset="0" stop-color="${top}"/><stop offset="1" stop-color="${bottom}"/></linearGradient>`,
    );
    return `url(#${id})`;
  }

  /** A soft light pool centred at (cx, cy), as fractions of the canvas. */
  glow(cx: number, cy: number, color: string, opacity: number): string {
    const id = this.id('r');
    this.defs.push(
      `<radialGradient id="${id}" cx="${n(cx)}" cy="${n(cy)}" r="0.75"><stop offset="0" stop-color="${color}" stop-opacity="${n(opacity, 100)}"/><stop offset="1" stop-color="${color}" stop-opacity="0"/></radialGradient>`,
    );
    return `url(#${id})`;
  }

  toSvg(): string {
    return (
      `<svg xmlns="http://www.w3.org/2000/svg" width="${this.w}" height="${this.h}" viewBox="0 0 ${this.w} ${this.h}">` +
      `<defs>${this.defs.join('')}</defs>${this.parts.join('')}</svg>`
    );
  }
}

function n(value: number, scale = 10): string {
  return String(Math.round(value * scale) / scale);
}

/** `#rrggbb` from hue (degrees), saturation and lightness (0–1). */
function hsl(h: number, s: number, l: number): string {
  const k = (i: number) => (i + h / 30) % 12;
  const a = s * Math.min(l, 1 - l);
  const channel = (i: number) => {
    const value = l - a * Math.max(-1, Math.min(k(i) - 3, 9 - k(i), 1));
    return Math.round(value * 255)
      .toString(16)
      .padStart(2, '0');
  };
  return `#${channel(0)}${channel(8)}${channel(4)}`;
}

/**
 * Every served size is 2:1 and cut from the centre ("cover"), so what must stay
 * visible — the caption, the main furniture — sits inside the centred 2:1 band.
 */
function safeBand(c: Canvas): { top: number; bottom: number; height: number } {
  const height = Math.min(c.h, c.w / 2);
  const top = (c.h - height) / 2;
  return { top, bottom: top + height, height };
}

function drawSky(c: Canvas, rng: Rng, bottom: number): void {
  const dusk = rng.chance(0.3);
  const hue = dusk ? rng.range(10, 35) : rng.range(195, 215);
  const top = dusk ? hsl(rng.range(225, 255), 0.45, 0.35) : hsl(hue, 0.65, rng.range(0.45, 0.6));
  const horizon = dusk ? hsl(hue, 0.85, 0.68) : hsl(hue, 0.5, 0.86);
  c.rect(0, 0, c.w, bottom, c.vertical(top, horizon));
  const clouds = rng.int(0, 4);
  for (let i = 0; i < clouds; i++) {
    const cx = rng.range(0, c.w);
    const cy = rng.range(0.05, 0.45) * bottom;
    const rx = rng.range(0.06, 0.16) * c.w;
    c.ellipse(cx, cy, rx, rx * rng.range(0.18, 0.3), '#ffffff', ` opacity="${n(rng.range(0.35, 0.7), 100)}"`);
  }
}

function drawWindowGrid(
  c: Canvas,
  rng: Rng,
  x: number,
  y: number,
  w: number,
  h: number,
  litColor: string,
  darkColor: string,
): void {
  const cols = Math.max(2, Math.round(w / rng.range(45, 80)));
  const rows = Math.max(2, Math.round(h / rng.range(55, 90)));
  const cw = w / cols;
  const rh = h / rows;
  for (let r = 0; r < rows; r++) {
    for (let col = 0; col < cols; col++) {
      c.rect(
        x + col * cw + cw * 0.22,
        y + r * rh + rh * 0.18,
        cw * 0.56,
        rh * 0.58,
        rng.chance(0.35) ? litColor : darkColor,
      );
    }
  }
}

function drawFacade(c: Canvas, rng: Rng, ground = c.h * 0.88): void {
  drawSky(c, rng, ground);
  const brick = rng.pick([
    hsl(rng.range(5, 20), 0.45, rng.range(0.32, 0.45)),
    hsl(rng.range(25, 40), 0.25, rng.range(0.55, 0.7)),
    hsl(rng.range(200, 220), 0.06, rng.range(0.5, 0.7)),
  ]);
  const left = c.w * rng.range(0.08, 0.18);
  const right = c.w * rng.range(0.82, 0.92);
  const roof = c.h * rng.range(0.06, 0.2);
  // Neighbours on either side, darker so the subject building reads first.
  c.rect(0, roof + c.h * 0.1, left, ground, hsl(rng.range(0, 40), 0.2, 0.3));
  c.rect(right, roof + c.h * 0.05, c.w - right, ground, hsl(rng.range(0, 40), 0.15, 0.35));
  c.rect(left, roof, right - left, ground - roof, brick);
  c.rect(left - c.w * 0.01, roof - c.h * 0.02, right - left + c.w * 0.02, c.h * 0.03, hsl(30, 0.1, 0.85));
  const lit = hsl(rng.range(40, 50), 0.9, 0.75);
  const dark = hsl(rng.range(200, 220), 0.25, 0.22);
  drawWindowGrid(c, rng, left, roof + c.h * 0.04, right - left, ground - roof - c.h * 0.2, lit, dark);
  const doorW = c.w * 0.08;
  const doorX = c.w * rng.range(0.4, 0.52);
  c.rect(doorX, ground - c.h * 0.14, doorW, c.h * 0.14, hsl(rng.range(0, 360), 0.35, 0.25));
  c.rect(doorX - c.w * 0.02, ground - c.h * 0.16, doorW + c.w * 0.04, c.h * 0.02, hsl(30, 0.1, 0.8));
  c.rect(0, ground, c.w, c.h - ground, hsl(0, 0, 0.62));
  c.rect(0, ground, c.w, c.h * 0.01, hsl(0, 0, 0.75));
  if (rng.chance(0.6)) {
    const tx = c.w * rng.pick([0.22, 0.72]);
    c.rect(tx - c.w * 0.006, ground - c.h * 0.2, c.w * 0.012, c.h * 0.2, hsl(25, 0.4, 0.25));
    c.ellipse(tx, ground - c.h * 0.25, c.w * 0.07, c.h * 0.1, hsl(rng.range(90, 130), 0.4, 0.35));
  }
}

/** The block from across the street: the building set back behind a sidewalk, a roadway and parked cars. */
function drawStreet(c: Canvas, rng: Rng): void {
  const band = safeBand(c);
  const curb = band.top + band.height * 0.7;
  drawFacade(c, rng, curb - band.height * 0.06);
  c.rect(0, curb - band.height * 0.06, c.w, band.height * 0.06, hsl(0, 0, 0.7));
  c.rect(0, curb, c.w, c.h - curb, hsl(220, 0.05, 0.24));
  const lane = curb + (c.h - curb) * 0.55;
  for (let x = c.w * 0.02; x < c.w; x += c.w * 0.12) c.rect(x, lane, c.w * 0.06, 4, '#e8d35a');
  const cars = rng.int(1, 3);
  for (let i = 0; i < cars; i++) {
    const w = c.w * rng.range(0.16, 0.22);
    const x = (c.w / cars) * i + rng.range(0, c.w / cars - w);
    const y = curb + band.height * 0.02;
    const h = band.height * 0.12;
    const paint = hsl(rng.range(0, 360), rng.range(0.1, 0.6), rng.range(0.25, 0.6));
    c.rect(x, y + h * 0.35, w, h * 0.5, paint, ' rx="10"');
    c.rect(x + w * 0.2, y, w * 0.55, h * 0.45, paint, ' rx="12"');
    c.rect(x + w * 0.26, y + h * 0.06, w * 0.43, h * 0.3, hsl(205, 0.3, 0.75));
    for (const wx of [x + w * 0.2, x + w * 0.8]) c.ellipse(wx, y + h * 0.88, h * 0.16, h * 0.16, '#1c1c1c');
  }
}

/** The front door close up: masonry, a canopy or stoop, the door's glass, the house number. */
function drawEntrance(c: Canvas, rng: Rng): void {
  const band = safeBand(c);
  const wall = rng.pick([
    hsl(rng.range(5, 20), 0.45, rng.range(0.32, 0.45)),
    hsl(rng.range(25, 40), 0.25, rng.range(0.55, 0.7)),
  ]);
  c.rect(0, 0, c.w, c.h, wall);
  for (let y = 0; y < c.h; y += c.h * 0.03) c.rect(0, y, c.w, 1.2, hsl(0, 0, 0.3), ' opacity="0.25"');
  const ground = band.bottom - band.height * 0.05;
  const doorW = band.height * 0.42;
  const doorH = band.height * 0.66;
  const doorX = c.w / 2 - doorW / 2;
  const doorY = ground - doorH;
  c.rect(doorX - doorW * 0.12, doorY - doorW * 0.12, doorW * 1.24, doorH + doorW * 0.12, hsl(30, 0.1, 0.82));
  c.rect(doorX, doorY, doorW, doorH, hsl(rng.range(0, 360), 0.35, 0.22));
  c.rect(doorX + doorW * 0.14, doorY + doorH * 0.08, doorW * 0.72, doorH * 0.55, hsl(205, 0.25, 0.7));
  c.ellipse(doorX + doorW * 0.86, doorY + doorH * 0.62, 6, 6, '#d4af37');
  if (rng.chance(0.6)) {
    // A canopy out to the curb, as on elevator buildings.
    c.poly(
      [
        [doorX - doorW * 0.5, doorY - doorW * 0.2],
        [doorX + doorW * 1.5, doorY - doorW * 0.2],
        [doorX + doorW * 1.3, doorY - doorW * 0.02],
        [doorX - doorW * 0.3, doorY - doorW * 0.02],
      ],
      hsl(rng.pick([0, 120, 220]), 0.45, 0.22),
    );
  }
  for (let i = 0; i < 3; i++) {
    const inset = i * doorW * 0.12;
    c.rect(
      doorX - doorW * 0.4 + inset,
      ground + i * 8,
      doorW * 1.8 - 2 * inset,
      8,
      hsl(30, 0.08, 0.65 - i * 0.05),
    );
  }
  c.rect(doorX + doorW * 1.3, doorY + doorH * 0.2, doorW * 0.32, doorW * 0.2, '#f2f0ea', ' rx="4"');
  for (const lx of [doorX - doorW * 0.35, doorX + doorW * 1.35]) {
    c.ellipse(lx, doorY + doorH * 0.15, doorW * 0.06, doorW * 0.1, '#f7e3b0');
  }
}

/**
 * A floor plan: white paper, dark outer walls, rooms divided by inner walls
 * with door gaps and room labels; drawn inside the 2:1 band so every size shows it whole.
 */
function drawPlan(c: Canvas, rng: Rng): void {
  const band = safeBand(c);
  c.rect(0, 0, c.w, c.h, '#fbfaf7');
  const margin = band.height * 0.08;
  const x0 = c.w * 0.08;
  const x1 = c.w * 0.92;
  const y0 = band.top + margin;
  const y1 = band.bottom - band.height * 0.18;
  const wall = '#2b2b2b';
  const thick = Math.max(4, band.height * 0.012);
  const thin = thick * 0.55;
  // Rooms: a row of columns, the widest the living room, some split in two (bath/closet).
  const columns = rng.int(3, 5);
  const weights = Array.from({ length: columns }, (_, i) =>
    i === 0 ? rng.range(1.6, 2.2) : rng.range(0.8, 1.3),
  );
  const total = weights.reduce((a, b) => a + b, 0);
  // Rooms after the living room, in the order cells are drawn: each used once.
  const labels = ['KITCHEN', 'BEDROOM', 'BATH', 'BEDROOM', 'CLOSET', 'DINING', 'BATH', 'OFFICE'];
  const font = `font-family="DejaVu Sans, Liberation Sans, Arial, sans-serif"`;
  const labelSize = Math.round(band.height * 0.035);
  let x = x0;
  let label = 0;
  for (let i = 0; i < columns; i++) {
    const w = ((x1 - x0) * weights[i]!) / total;
    const split = i > 0 && rng.chance(0.5);
    const cells = split ? [y0, y0 + (y1 - y0) * rng.range(0.4, 0.6), y1] : [y0, y1];
    for (let k = 0; k + 1 < cells.length; k++) {
      const top = cells[k]!;
      const bottom = cells[k + 1]!;
      if (k > 0) {
        c.rect(x, top - thin / 2, w * 0.6, thin, wall);
      }
      const name = i === 0 ? 'LIVING' : (labels[label++] ?? 'ROOM');
      c.parts.push(
        `<text x="${n(x + w / 2)}" y="${n((top + bottom) / 2)}" ${font} font-size="${labelSize}" fill="#555555" text-anchor="middle">${name}</text>`,
      );
    }
    if (i > 0) {
      // Inner wall with a door gap and the door's swing.
      const gapTop = y0 + (y1 - y0) * rng.range(0.15, 0.6);
      const gap = band.height * 0.09;
      c.rect(x - thin / 2, y0, thin, gapTop - y0, wall);
      c.rect(x - thin / 2, gapTop + gap, thin, y1 - gapTop - gap, wall);
      c.parts.push(
        `<path d="M ${n(x)} ${n(gapTop)} A ${n(gap)} ${n(gap)} 0 0 1 ${n(x + gap)} ${n(gapTop + gap)}" fill="none" stroke="#888888" stroke-width="1.5"/>`,
      );
    }
    x += w;
  }
  c.rect(x0, y0, x1 - x0, thick, wall);
  c.rect(x0, y1 - thick, x1 - x0, thick, wall);
  c.rect(x0, y0, thick, y1 - y0, wall);
  c.rect(x1 - thick, y0, thick, y1 - y0, wall);
  // Windows: gaps in the outer wall drawn as thin double lines.
  const windows = rng.int(2, 4);
  for (let i = 0; i < windows; i++) {
    const wx = x0 + (x1 - x0) * rng.range(0.05, 0.85);
    c.rect(wx, y0 - 1, (x1 - x0) * 0.08, thick + 2, '#fbfaf7');
    c.rect(wx, y0 + thick * 0.3, (x1 - x0) * 0.08, 1.5, '#6a8caf');
  }
}

function drawSkyline(c: Canvas, rng: Rng, deck: boolean): void {
  const horizon = c.h * rng.range(0.6, 0.75);
  drawSky(c, rng, horizon);
  c.rect(0, horizon, c.w, c.h - horizon, hsl(rng.range(195, 215), 0.3, 0.4));
  for (const layer of [0, 1]) {
    let x = -rng.range(0, 40);
    const shade = layer === 0 ? 0.55 : 0.32;
    while (x < c.w) {
      const width = c.w * rng.range(0.04, 0.1);
      const height = c.h * rng.range(0.12, layer === 0 ? 0.35 : 0.5);
      const color = hsl(rng.range(200, 230), 0.12, shade + rng.range(-0.05, 0.05));
      c.rect(x, horizon - height, width, height, color);
      if (layer === 1 && rng.chance(0.5)) {
        drawWindowGrid(
          c,
          rng,
          x,
          horizon - height,
          width,
          height,
          hsl(45, 0.8, 0.7),
          hsl(215, 0.2, shade - 0.08),
        );
      }
      x += width + c.w * rng.range(0, 0.015);
    }
  }
  if (deck) {
    const band = safeBand(c);
    const deckTop = band.bottom - band.height * 0.25;
    c.rect(0, deckTop, c.w, c.h - deckTop, hsl(rng.range(20, 35), 0.35, 0.42));
    for (let y = deckTop; y < c.h; y += c.h * 0.03) c.rect(0, y, c.w, 1.5, hsl(25, 0.3, 0.3));
    const rail = deckTop - c.h * 0.08;
    c.rect(0, rail, c.w, c.h * 0.012, hsl(0, 0, 0.2));
    for (let x = 0; x < c.w; x += c.w * 0.05) c.rect(x, rail, c.w * 0.004, deckTop - rail, hsl(0, 0, 0.2));
  }
}

function drawRoom(c: Canvas, rng: Rng, scene: Scene): void {
  const band = safeBand(c);
  const wallHue = rng.range(20, 60);
  const wall = hsl(wallHue, rng.range(0.1, 0.35), rng.range(0.78, 0.9));
  const sideWall = hsl(wallHue, 0.2, 0.7);
  const floorY = band.top + band.height * rng.range(0.68, 0.76);
  const inset = c.w * rng.range(0.08, 0.14);
  const ceiling = Math.max(0, band.top - band.height * 0.1);

  c.rect(0, 0, c.w, c.h, wall);
  // Side walls and floor in one-point perspective.
  c.poly(
    [
      [0, 0],
      [inset, ceiling + inset * 0.5],
      [inset, floorY],
      [0, c.h],
    ],
    sideWall,
  );
  c.poly(
    [
      [c.w, 0],
      [c.w - inset, ceiling + inset * 0.5],
      [c.w - inset, floorY],
      [c.w, c.h],
    ],
    sideWall,
  );
  const floor =
    scene === 'bathroom' || scene === 'kitchen' || scene === 'lobby'
      ? hsl(rng.range(0, 40), 0.05, rng.range(0.55, 0.8))
      : hsl(rng.range(22, 36), rng.range(0.35, 0.55), rng.range(0.35, 0.55));
  c.poly(
    [
      [inset, floorY],
      [c.w - inset, floorY],
      [c.w, c.h],
      [0, c.h],
    ],
    floor,
  );

  const windows = scene === 'closet' ? 0 : rng.int(1, 3);
  const windowTop = band.top + band.height * 0.12;
  const windowH = (floorY - windowTop) * 0.62;
  const span = c.w - 2 * inset;
  for (let i = 0; i < windows; i++) {
    const ww = span * rng.range(0.12, 0.2);
    const wx = inset + (span * (i + 0.5)) / windows - ww / 2;
    const skyTop = hsl(rng.range(195, 215), 0.6, 0.62);
    c.rect(wx - 6, windowTop - 6, ww + 12, windowH + 12, '#f4f1ea');
    c.rect(wx, windowTop, ww, windowH, c.vertical(skyTop, hsl(200, 0.4, 0.9)));
    c.rect(wx + ww / 2 - 2, windowTop, 4, windowH, '#f4f1ea');
    c.rect(wx, windowTop + windowH * 0.45, ww, 4, '#f4f1ea');
  }
  if (windows > 0) c.rect(0, 0, c.w, c.h, c.glow(0.5, 0.3, '#fff6dc', 0.35));

  const accent = hsl(rng.range(0, 360), rng.range(0.35, 0.6), rng.range(0.35, 0.55));
  const mid = c.w / 2 + c.w * rng.range(-0.12, 0.12);
  const fy = floorY;
  switch (scene) {
    case 'living': {
      c.ellipse(mid, fy + (c.h - fy) * 0.35, c.w * 0.25, (c.h - fy) * 0.2, hsl(rng.range(0, 360), 0.25, 0.6));
      const sw = c.w * 0.34;
      c.rect(mid - sw / 2, fy - band.height * 0.2, sw, band.height * 0.2, accent, ' rx="14"');
      c.rect(
        mid - sw / 2,
        fy - band.height * 0.12,
        sw,
        band.height * 0.14,
        accent,
        ' rx="10" opacity="0.85"',
      );
      c.rect(mid + sw * 0.62, fy - band.height * 0.42, 6, band.height * 0.42, '#3a3a3a');
      c.ellipse(mid + sw * 0.62 + 3, fy - band.height * 0.44, 26, 18, '#f7e3b0');
      break;
    }
    case 'bedroom': {
      const bw = c.w * 0.38;
      c.rect(mid - bw / 2, fy - band.height * 0.3, bw, band.height * 0.12, hsl(25, 0.35, 0.35), ' rx="6"');
      c.rect(mid - bw / 2, fy - band.height * 0.18, bw, band.height * 0.22, '#f2f0ea', ' rx="8"');
      c.rect(mid - bw / 2, fy - band.height * 0.08, bw, band.height * 0.12, accent, ' rx="6"');
      c.rect(mid - bw * 0.4, fy - band.height * 0.24, bw * 0.3, band.height * 0.07, '#ffffff', ' rx="10"');
      c.rect(mid + bw * 0.1, fy - band.height * 0.24, bw * 0.3, band.height * 0.07, '#ffffff', ' rx="10"');
      break;
    }
    case 'kitchen': {
      const top = fy - band.height * 0.24;
      c.rect(inset, top, c.w - 2 * inset, fy - top, accent);
      c.rect(inset, top - 8, c.w - 2 * inset, 10, hsl(0, 0, 0.9));
      for (let x = inset + 20; x < c.w - inset - 60; x += 90)
        c.rect(
          x,
          top + 20,
          70,
          fy - top - 30,
          accent,
          ' opacity="0.8" stroke="#000000" stroke-opacity="0.2"',
        );
      c.rect(
        c.w - inset - c.w * 0.1,
        fy - band.height * 0.55,
        c.w * 0.09,
        band.height * 0.55,
        '#d8dadc',
        ' rx="4"',
      );
      break;
    }
    case 'bathroom': {
      for (let x = inset; x < c.w - inset; x += 40) c.rect(x, band.top, 1.5, fy - band.top, '#00000014');
      for (let y = band.top; y < fy; y += 40) c.rect(inset, y, c.w - 2 * inset, 1.5, '#00000014');
      c.rect(
        mid - c.w * 0.22,
        fy - band.height * 0.16,
        c.w * 0.44,
        band.height * 0.16,
        '#fbfbfb',
        ' rx="18"',
      );
      c.rect(
        mid - c.w * 0.2,
        fy - band.height * 0.14,
        c.w * 0.4,
        band.height * 0.05,
        hsl(195, 0.45, 0.75),
        ' rx="10"',
      );
      break;
    }
    case 'dining': {
      const tw = c.w * 0.3;
      c.rect(mid - tw / 2, fy - band.height * 0.16, tw, band.height * 0.03, hsl(28, 0.45, 0.32));
      c.rect(mid - tw * 0.42, fy - band.height * 0.13, 8, band.height * 0.13, hsl(28, 0.45, 0.28));
      c.rect(mid + tw * 0.42 - 8, fy - band.height * 0.13, 8, band.height * 0.13, hsl(28, 0.45, 0.28));
      for (const side of [-1, 1]) {
        const cx = mid + side * tw * 0.65;
        c.rect(cx - 20, fy - band.height * 0.26, 40, band.height * 0.26, accent, ' rx="6"');
      }
      c.ellipse(mid, band.top + band.height * 0.06, 40, 16, '#f7e3b0');
      break;
    }
    case 'closet': {
      for (let y = band.top + band.height * 0.1; y < fy; y += band.height * 0.18) {
        c.rect(inset, y, c.w - 2 * inset, 8, hsl(30, 0.3, 0.5));
        for (let x = inset + 10; x < c.w - inset - 30; x += rng.range(30, 60)) {
          c.rect(
            x,
            y - band.height * 0.1,
            24,
            band.height * 0.1,
            hsl(rng.range(0, 360), 0.3, rng.range(0.3, 0.7)),
          );
        }
      }
      break;
    }
    default: {
      // Lobby: a desk and planters on stone.
      c.rect(mid - c.w * 0.15, fy - band.height * 0.18, c.w * 0.3, band.height * 0.18, hsl(25, 0.3, 0.3));
      for (const x of [inset + c.w * 0.05, c.w - inset - c.w * 0.05]) {
        c.rect(x - 22, fy - band.height * 0.1, 44, band.height * 0.1, '#555555');
        c.ellipse(x, fy - band.height * 0.2, 40, band.height * 0.12, hsl(110, 0.4, 0.32));
      }
    }
  }
}

function escapeXml(text: string): string {
  return text.replace(/[<>&"']/g, (ch) => `&#${ch.charCodeAt(0)};`);
}

function drawCaption(c: Canvas, caption: string | null): void {
  const band = safeBand(c);
  const size = Math.round(band.height * 0.07);
  const barH = size * 2;
  const y = band.bottom - barH;
  c.rect(0, y, c.w, barH, '#000000', ' opacity="0.45"');
  const font = `font-family="DejaVu Sans, Liberation Sans, Arial, sans-serif"`;
  const baseline = y + barH / 2 + size * 0.35;
  if (caption) {
    c.parts.push(
      `<text x="${n(size * 0.8)}" y="${n(baseline)}" ${font} font-size="${size}" fill="#ffffff">${escapeXml(caption.slice(0, 60))}</text>`,
    );
  }
  c.parts.push(
    `<text x="${n(c.w - size * 0.8)}" y="${n(baseline)}" ${font} font-size="${Math.round(size * 0.55)}" fill="#ffffff" opacity="0.8" text-anchor="end">Stoop demo · synthetic photo</text>`,
  );
}
