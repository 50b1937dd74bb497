import { type Diagnosis, isObject, parseJson } from './doctor-findings.js';

/**
 * The parked area (`/zoott_~parked/<world>`): results the AMQP bridge could not publish. Each
 * is reported, with why it was parked and where it was to go, until an operator retries or
 * drops it with `zoott parked`: a consumer somewhere is still waiting for it. Never moved by
 * `--repair` (it is a result, not damage).
 */
export async function diagnoseParked(diagnosis: Diagnosis): Promise<void> {
  const dir = diagnosis.ctx.layout.parked;
  const world = diagnosis.ctx.layout.world;
  for (const name of (await diagnosis.folder(dir)).sort()) {
    const path = `${dir}/${name}`;
    const got = await diagnosis.read(path);
    if (!got) continue;
    await diagnosis.checkAcl(path);
    const parsed = parseJson(got.data);
    const message = parsed.ok && isObject(parsed.value) ? parsed.value : null;
    const where =
      message && typeof message.routingkey === 'string'
        ? ` for ${typeof message.exchange === 'string' && message.exchange !== '' ? `exchange ${JSON.stringify(message.exchange)}` : 'the default exchange'}, routing key ${JSON.stringify(message.routingkey)}`
        : '';
    const why = message && typeof message.reason === 'string' ? ` (${message.reason})` : '';
    diagnosis.add(
      'parked-result',
      path,
      `a result the AMQP bridge could not publish${where}${why}: \`zoott parked ${world} ${name} --retry\` once it can go, or \`--drop\``,
      'none',
    );
  }
}
