// The exit codes of `zoott` are rows of the one table the three programs share.
export {
  ChildExitCode,
  ExitCode,
  type ExitCodeValue,
  exitCodesHelp,
  signalExitCode,
} from '@zoott/jobs/config';
