#pragma once
// OpenMP's worker threads spin for a while (libgomp: 300,000 turns) before they sleep between two
// parallel regions. On a machine whose cores are busy with other programs the spinning threads
// hold cores the working thread needs: beside two busy processes on 2 cores, 2 training threads
// ran at 4,900 tokens/s where 1 thread ran at 8,500 (and 2 threads at 12,500 with the passive
// policy). libgomp reads its wait policy once, when it loads, before main runs; so a program that
// wants the passive policy must start again with it set in its environment.
namespace attnlab {

// When neither OMP_WAIT_POLICY nor GOMP_SPINCOUNT is set, sets OMP_WAIT_POLICY=PASSIVE and starts
// this program again in the same process (execv of /proc/self/exe with the same arguments), so
// waiting threads sleep at once. A policy the user set is kept. Returns only when nothing was to
// do or the restart failed (then the program goes on with libgomp's default).
void restartWithPassiveOpenMpWait(char** argv);

}  // namespace attnlab
