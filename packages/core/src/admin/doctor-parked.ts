import { type Diagnosis, isObject, parseJson } from './doctor-findings.js';

/**
 * The parked area (`/zoott_~parked/<world>`): results the AMQP bridge could not publish. Each
 * is reported, with why it was parked and where it was to go, until an operator retries or
 * drops it with `zoott parked`: a consumer somewhere is still waiting for it. Never moved by
 * `--repair` (it is a result, not damage).
 */
export async function diagnoseParked(d: Diagnosis): Promise<void> {
  const dir = d.ctx.layout.parked;
  const world = d.ctx.layout.world;
  for (const name of (await d.folder(dir)).sort()) {
    const path = `${dir}/${name}`;
    const got = await d.read(path);
    if (!got) continue;
    await d.checkAcl(path);
    const parsed = parseJson(got.data);
    const v = parsed.ok && isObject(parsed.value) ? parsed.value : null;
    const where =
      v && typeof v.routingkey === 'string'
        ? ` for ${typeof v.exchange === 'string' && v.exchange !== '' ? `exchange ${JSON.stringify(v.exchange)}` : 'the default exchange'}, routing key ${JSON.stringify(v.routingkey)}`
        : '';
    const why = v && typeof v.reason === 'string' ? ` (${v.reason})` : '';
    d.add(
      'parked-result',
      path,
      `a result the AMQP bridge could not publish${where}${why}: \`zoott parked ${world} ${name} --retry\` once it can go, or \`--drop\``,
      'none',
    );
  }
}
