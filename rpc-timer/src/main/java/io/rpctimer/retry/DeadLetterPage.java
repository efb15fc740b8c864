package io.rpctimer.retry;

import java.util.List;

/**
 * One page of an application's dead letters that match a filter, newest first (by the time they became dead letters,
 * then by key), and how many match in all.
 *
 * <p><b>Threading:</b> immutable; a snapshot (a dead letter replayed or purged since may still be listed).
 *
 * @param letters  the dead letters of this page, at most {@code pageSize}
 * @param page     the page, 1-based
 * @param pageSize the most dead letters a page holds
 * @param total    how many dead letters match the filter
 */
public record DeadLetterPage(List<DeadLetter> letters, int page, int pageSize, long total) {

    public DeadLetterPage {
        letters = List.copyOf(letters);
    }

    /** @return how many pages the matching dead letters fill, at least 1 */
    public long pages() {
        return Math.max(1, (total + pageSize - 1) / pageSize);
    }

    /** @return whether a later page holds more */
    public boolean hasNext() {
        return (long) page * pageSize < total;
    }
}
