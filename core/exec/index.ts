/** Code execution, pure part: the exec.python declaration and the result envelope. */
export * from './tool';
export * from './envelope';
