import { packageBuild } from '../../tsup.shared.js';

export default packageBuild(['src/index.ts', 'src/recipes.ts', 'src/jobs.ts', 'src/internal.ts']);
