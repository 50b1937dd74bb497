/** The version `zoott-worker --version` reports: zoott's one version, from core. */
export { ZOOTT_VERSION as VERSION } from '@zoott/core';
