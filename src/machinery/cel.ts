// CEL for admission policies, CRD rules and the authentication configuration: the API the rest of the server imports (compile checks, the authorizer library, evaluation, expressions over other variables).
export { celResultType, celCompileProblem, type CelResult, type CelDeclarations } from './cel-compile.js'
export { CelAuthorizer, CelResourceCheck, type CelDecision, type CelAuthzAttributes, type CelAuthorize } from './cel-authorizer.js'
export { celProgram, celEvaluate, celThrow, toCelValue, CelPending, type CelProgram, type CelOutcome } from './cel-evaluate.js'
export { celCompileProblemWith, celCompileSelf, celProgramWith, celSelects, type CelVariables, type CelSelfType } from './cel-variables.js'
