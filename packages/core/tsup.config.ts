import { packageBuild } from '../../tsup.shared.js';

export default packageBuild([
  'src/index.ts',
  'src/recipes.ts',
  'src/jobs.ts',
  'src/admin.ts',
  'src/internal.ts',
]);
