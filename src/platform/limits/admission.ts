// Admission of paid calls: a module that makes calls someone pays for (the LLM proxy) asks before
// making one; the module that keeps the money (billing) answers, through this interface, so that the
// two need not know each other. Without such a module every call is admitted.

/** A paid call about to be made. */
export interface PaidCall {
  projectId: string;
  /** The call's own id; what its usage record will name. */
  requestId: string;
  provider: string;
  model: string | undefined;
  /** Size of the request body, which bounds its input. */
  bodyBytes: number;
  /** The most output the caller allowed per answer, when it said. */
  maxOutputTokens: number | undefined;
  /** How many answers the call asks for (each may use the output allowed). */
  choices: number;
}

export interface CallAdmission {
  /** Resolves when the call may go ahead; throws the API error to answer when it may not. */
  admit(call: PaidCall): Promise<void>;
}

export const admitEveryCall: CallAdmission = { admit: async () => {} };
