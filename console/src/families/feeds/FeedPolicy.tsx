// A feed's resource policy (docs/feeds.md "Who may do what with one feed"): the shared policy page for one feed.
import { useQuery } from '@tanstack/react-query';
import { useParams } from 'react-router';
import { api, unwrap } from '../../api.ts';
import { projectKey } from '../../app/query.ts';
import { useProject } from '../../app/project.tsx';
import { ErrorAlert } from '../../ui/feedback.tsx';
import { ResourcePolicy } from '../../ui/ResourcePolicy.tsx';

export default function FeedPolicy() {
  const { projectId, path } = useProject();
  const feedId = useParams().feedId!;
  const feed = useQuery({
    queryKey: projectKey(projectId, 'feeds', feedId),
    queryFn: () => unwrap(api.GET('/accounts/projects/{project_id}/feeds/{feed_id}', { params: { path: { project_id: projectId, feed_id: feedId } } })),
  });
  if (!feed.data) return <ErrorAlert error={feed.error} />;
  return (
    <ResourcePolicy
      type="feed"
      resourceId={feedId}
      label={`feed ${feed.data.feed.name}`}
      back={{ to: path(`feeds/${feedId}`), label: 'Back to the feed' }}
      roles={['manager', 'publisher', 'subscriber', 'reader', 'list']}
      rolesHelp="manager: everything; publisher: publish; subscriber: add and change subscriptions; reader: see it and its subscriptions; list: find it only."
      manage={feed.data.rights.includes('change_policy')}
      note="Holders of the project's feed roles (developers and admins among them) keep what those roles allow on every feed."
    />
  );
}
