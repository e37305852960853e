import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ErrorBody } from '../src/http/errors.ts';
import { createTestApp, getJson, type TestApp } from './support/app.ts';

/** Both search paths validate alike: the checks run before either is asked. */
let t: TestApp;
beforeAll(async () => {
  t = await createTestApp({ scale: 0.005 });
});
afterAll(async () => {
  await t?.close();
});

const MIDTOWN = '40.7549,-73.9840';

describe('geo search parameter errors', () => {
  it.each([
    // bbox: shape (the pattern), then ranges and order.
    ['rentals', 'bbox=-74,40.7,-73.9', 'bbox', 'pattern'],
    ['rentals', 'bbox=-74,40.7,-73.9,40.8,1', 'bbox', 'pattern'],
    ['rentals', 'bbox=a,b,c,d', 'bbox', 'pattern'],
    ['rentals', 'bbox=-74;40.7;-73.9;40.8', 'bbox', 'pattern'],
    ['rentals', 'bbox=NaN,40.7,-73.9,40.8', 'bbox', 'pattern'],
    ['rentals', 'bbox=Infinity,40.7,-73.9,40.8', 'bbox', 'pattern'],
    ['rentals', 'bbox=1e1,40.7,-73.9,40.8', 'bbox', 'pattern'],
    ['rentals', 'bbox=', 'bbox', 'pattern'],
    ['sales', 'bbox=-181,40.7,-73.9,40.8', 'bbox', 'range'],
    ['sales', 'bbox=-74,-91,-73.9,40.8', 'bbox', 'range'],
    ['sales', 'bbox=-74,40.7,180.5,40.8', 'bbox', 'range'],
    ['sales', 'bbox=-74,40.7,-73.9,90.01', 'bbox', 'range'],
    // Inverted and degenerate boxes; no antimeridian crossing.
    ['rentals', 'bbox=-73.9,40.7,-74,40.8', 'bbox', 'range'],
    ['rentals', 'bbox=-74,40.8,-73.9,40.7', 'bbox', 'range'],
    ['rentals', 'bbox=-74,40.7,-74,40.8', 'bbox', 'range'],
    ['rentals', 'bbox=-74,40.7,-73.9,40.7', 'bbox', 'range'],
    ['rentals', 'bbox=170,10,-170,20', 'bbox', 'range'],
    // near: shape, then ranges (lat first).
    ['rentals', 'near=40.75', 'near', 'pattern'],
    ['rentals', 'near=40.75,-73.98,5', 'near', 'pattern'],
    ['rentals', 'near=40.75;-73.98', 'near', 'pattern'],
    ['rentals', 'near=north,west', 'near', 'pattern'],
    ['sales', 'near=-100.5,40.75', 'near', 'range'],
    ['sales', 'near=91,0', 'near', 'range'],
    ['sales', 'near=0,181', 'near', 'range'],
    // radius: integer metres, 1 to 50,000.
    ['rentals', `near=${MIDTOWN}&radius=0`, 'radius', 'minimum'],
    ['rentals', `near=${MIDTOWN}&radius=-5`, 'radius', 'minimum'],
    ['rentals', `near=${MIDTOWN}&radius=50001`, 'radius', 'maximum'],
    ['rentals', `near=${MIDTOWN}&radius=1.5`, 'radius', 'type'],
    ['rentals', `near=${MIDTOWN}&radius=1km`, 'radius', 'type'],
    ['sales', `near=${MIDTOWN}&radius=Infinity`, 'radius', 'type'],
    // Only with near.
    ['rentals', 'radius=500', 'radius', 'requires_near'],
    ['sales', 'radius=500&bbox=-74,40.7,-73.9,40.8', 'radius', 'requires_near'],
    ['rentals', 'sort=DISTANCE', 'sort', 'requires_near'],
    ['sales', 'sort=DISTANCE&bbox=-74,40.7,-73.9,40.8', 'sort', 'requires_near'],
  ])('%s?%s → 400 naming %s (%s)', async (kind, query, parameter, rule) => {
    const { status, body } = await getJson<ErrorBody>(t, `/v1/search/${kind}?${query}`);
    expect(status, JSON.stringify(body)).toBe(400);
    expect(body.error).toMatchObject({ code: 'INVALID_PARAMS', status: 400 });
    expect(body.error.message).toContain(`"${parameter}"`);
    expect(body.error.details?.params?.[0]).toMatchObject({ parameter, rule, location: 'query' });
  });

  it.each([
    ['radius=500', 'radius'],
    ['sort=DISTANCE', 'sort'],
  ])('%s without near names both %s and near', async (query, parameter) => {
    const { status, body } = await getJson<ErrorBody>(t, `/v1/search/rentals?${query}`);
    expect(status).toBe(400);
    expect(body.error.details?.params?.map((p) => p.parameter)).toEqual([parameter, 'near']);
    expect(body.error.message).toContain('near');
  });

  it('a bbox error says which value is wrong and the order expected', async () => {
    const lngFirst = await getJson<ErrorBody>(t, '/v1/search/rentals?bbox=-74,95,-73.9,96');
    expect(lngFirst.body.error.message).toContain('minLat (2nd value)');
    const inverted = await getJson<ErrorBody>(t, '/v1/search/rentals?bbox=-73.9,40.7,-74,40.8');
    expect(inverted.body.error.message).toContain('minLng,minLat,maxLng,maxLat');
    expect(inverted.body.error.message).toContain('antimeridian');
    const shape = await getJson<ErrorBody>(t, '/v1/search/rentals?bbox=1,2,3');
    expect(shape.body.error.message).toContain('minLng,minLat,maxLng,maxLat');
  });

  it('a near error says near is latitude first', async () => {
    const { body } = await getJson<ErrorBody>(t, '/v1/search/rentals?near=100,40.75');
    expect(body.error.message).toContain('lat (1st value; near is lat,lng)');
  });
});
